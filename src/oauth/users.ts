// Local users of a tenant, for the login page. Passwords are hashed with scrypt (memory-hard:
// N=2^15, r=8 → 32 MiB per hash) under a per-user salt; only the hash is stored.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { Type, type Static } from "@sinclair/typebox";
import { named, Timestamp } from "../records/schema-kit.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

/** Usernames: slug-ish, and never "." or ".." (they are path segments of the admin API). */
export const Username = named(
  "Username",
  Type.String({
    description:
      "A username: 1–64 characters of A–Z, a–z, 0–9, '.', '_', '@' and '-', starting with a letter or digit.",
    pattern: "^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$",
  }),
);

export const Email = Type.String({ format: "email", maxLength: 320, description: "E-mail address." });

/** Group and role names: what policy rules match (docs/policy.md). */
const attributes = (what: string) =>
  Type.Array(
    Type.String({
      description: `A ${what} name: 1–128 characters of A–Z a–z 0–9 . _ : @ / + -, starting with a letter or digit.`,
      pattern: "^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$",
    }),
    {
      description: `The user's ${what}s, matched by policy rules (docs/policy.md). They reach the user's access tokens at their next issuance (a refresh or a new sign-in); tokens issued before keep the old ones until they expire.`,
      maxItems: 100,
      uniqueItems: true,
    },
  );

/** A local user of a tenant as shown (the admin API, audit entries): the password never is. */
export const User = named(
  "User",
  Type.Object(
    {
      username: Username,
      sub: Type.String({ description: "The stable subject (`sub`) of the user's tokens; never reused." }),
      email: Type.Optional(Email),
      groups: Type.Optional(attributes("group")),
      roles: Type.Optional(attributes("role")),
      createdAt: Timestamp,
    },
    { additionalProperties: false, description: "A local user of the tenant. Passwords are never shown." },
  ),
);
export type UserRecord = Static<typeof User>;

/** Groups and roles to set; an empty list removes the field. */
export interface UserAttributes {
  readonly groups?: readonly string[];
  readonly roles?: readonly string[];
}

interface StoredUser extends UserRecord {
  /** `scrypt$N$r$p$<salt b64url>$<hash b64url>` */
  readonly password: string;
}

const PARAMS = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_LENGTH = 32;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, PARAMS);
  return [
    "scrypt",
    PARAMS.N,
    PARAMS.r,
    PARAMS.p,
    salt.toString("base64url"),
    hash.toString("base64url"),
  ].join("$");
}

export async function passwordMatches(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const actual = await scrypt(password, Buffer.from(salt, "base64url"), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: PARAMS.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

// A hash to compare against when the user does not exist, so a wrong username costs as much as a
// wrong password and does not reveal which usernames exist.
let decoy: Promise<string> | undefined;

export class UserStore {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Creates a user; undefined when the username is taken. */
  async create(
    tenant: string,
    input: { username: string; password: string; email?: string } & UserAttributes,
  ): Promise<UserRecord | undefined> {
    const user: StoredUser = {
      username: input.username,
      sub: `u_${randomBytes(12).toString("base64url")}`,
      ...(input.email ? { email: input.email } : {}),
      ...(input.groups?.length ? { groups: [...input.groups] } : {}),
      ...(input.roles?.length ? { roles: [...input.roles] } : {}),
      createdAt: this.now().toISOString(),
      password: await hashPassword(input.password),
    };
    const key = this.keys.user(tenant, input.username);
    if (!(await this.store.set(key, JSON.stringify(user), { onlyIfAbsent: true }))) return undefined;
    await this.store.setAdd(this.keys.userIndex(tenant), input.username);
    return publicView(user);
  }

  async get(tenant: string, username: string): Promise<UserRecord | undefined> {
    const raw = await this.store.get(this.keys.user(tenant, username));
    return raw === null ? undefined : publicView(JSON.parse(raw) as StoredUser);
  }

  async list(tenant: string): Promise<UserRecord[]> {
    const names = (await this.store.setMembers(this.keys.userIndex(tenant))).sort();
    const users = await Promise.all(names.map((n) => this.get(tenant, n)));
    return users.filter((u): u is UserRecord => u !== undefined);
  }

  async setPassword(tenant: string, username: string, password: string): Promise<boolean> {
    const key = this.keys.user(tenant, username);
    const raw = await this.store.get(key);
    if (raw === null) return false;
    const user = { ...(JSON.parse(raw) as StoredUser), password: await hashPassword(password) };
    return this.store.compareAndSet(key, raw, JSON.stringify(user));
  }

  /** Sets or (null) removes a user's e-mail; false when there is no such user. */
  async setEmail(tenant: string, username: string, email: string | null): Promise<boolean> {
    return this.#update(tenant, username, (user) => {
      const { email: _previous, ...rest } = user;
      return email === null ? rest : { ...rest, email };
    });
  }

  /** Sets a user's groups, roles or both (an empty list removes one); false when there is no such user. */
  async setAttributes(tenant: string, username: string, attributes: UserAttributes): Promise<boolean> {
    return this.#update(tenant, username, (user) => {
      const { groups, roles, ...rest } = user;
      const next = { groups: attributes.groups ?? groups, roles: attributes.roles ?? roles };
      return {
        ...rest,
        ...(next.groups?.length ? { groups: [...next.groups] } : {}),
        ...(next.roles?.length ? { roles: [...next.roles] } : {}),
      };
    });
  }

  /** Applies `change` to a stored user by compare-and-set, retried under concurrent writers. */
  async #update(
    tenant: string,
    username: string,
    change: (user: StoredUser) => StoredUser,
  ): Promise<boolean> {
    const key = this.keys.user(tenant, username);
    for (let attempt = 0; attempt < 10; attempt++) {
      const raw = await this.store.get(key);
      if (raw === null) return false;
      const next = JSON.stringify(change(JSON.parse(raw) as StoredUser));
      if (await this.store.compareAndSet(key, raw, next)) return true;
    }
    throw new Error(`user ${tenant}/${username}: too many concurrent writers`);
  }

  async delete(tenant: string, username: string): Promise<boolean> {
    await this.store.setRemove(this.keys.userIndex(tenant), username);
    return (await this.store.del(this.keys.user(tenant, username))) > 0;
  }

  async removeTenant(tenant: string): Promise<void> {
    const names = await this.store.setMembers(this.keys.userIndex(tenant));
    await this.store.del(this.keys.userIndex(tenant), ...names.map((n) => this.keys.user(tenant, n)));
  }

  /** The user whose password this is; undefined otherwise, in about the same time either way. */
  async verify(tenant: string, username: string, password: string): Promise<UserRecord | undefined> {
    const raw = await this.store.get(this.keys.user(tenant, username));
    if (raw === null) {
      await passwordMatches(password, await (decoy ??= hashPassword("decoy")));
      return undefined;
    }
    const user = JSON.parse(raw) as StoredUser;
    return (await passwordMatches(password, user.password)) ? publicView(user) : undefined;
  }
}

function publicView(user: StoredUser): UserRecord {
  const { password: _password, ...rest } = user;
  return rest;
}
