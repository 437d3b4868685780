// Platform users (docs/admin-api.md "Platform users"): people who administer the whole Portico and
// sign in to the console with a password. Created by the operator through the bootstrap file or the
// admin API with a platform key; the password is hashed as local tenant users' are (oauth/users.ts).
import { Type, type Static } from "@sinclair/typebox";
import { hashPassword, passwordMatches, Username } from "../oauth/users.js";
import { named, Timestamp } from "../records/schema-kit.js";
import type { Keys } from "../store/keys.js";
import type { Store } from "../store/store.js";

/** A platform user as shown: the password never is. */
export const PlatformUser = named(
  "PlatformUser",
  Type.Object(
    { username: Username, createdAt: Timestamp },
    {
      additionalProperties: false,
      description:
        "A platform user: signs in to the console (/admin/console) and acts there as the platform key does. Passwords are never shown.",
    },
  ),
);
export type PlatformUserRecord = Static<typeof PlatformUser>;

interface StoredPlatformUser extends PlatformUserRecord {
  /** `scrypt$N$r$p$<salt>$<hash>`, as oauth/users.ts writes it. */
  readonly password: string;
}

// What a wrong username is compared against, so it costs as much as a wrong password.
let decoy: Promise<string> | undefined;

export class PlatformUsers {
  constructor(
    private readonly store: Store,
    private readonly keys: Keys,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Creates a user with a password (or a hash of one); undefined when the username is taken. */
  async create(
    username: string,
    secret: { password: string } | { passwordHash: string },
  ): Promise<PlatformUserRecord | undefined> {
    const user: StoredPlatformUser = {
      username,
      createdAt: this.now().toISOString(),
      password: "password" in secret ? await hashPassword(secret.password) : secret.passwordHash,
    };
    if (
      !(await this.store.set(this.keys.platformUser(username), JSON.stringify(user), { onlyIfAbsent: true }))
    )
      return undefined;
    await this.store.setAdd(this.keys.platformUserIndex(), username);
    return publicView(user);
  }

  /**
   * The bootstrap file's users: created, or their password set to the file's (the file is the
   * truth for the users it names; others are left alone). True when something was written.
   */
  async seed(username: string, secret: { password: string } | { passwordHash: string }): Promise<boolean> {
    if (await this.create(username, secret)) return true;
    const raw = await this.store.get(this.keys.platformUser(username));
    if (raw === null) return this.seed(username, secret);
    const stored = JSON.parse(raw) as StoredPlatformUser;
    const same =
      "password" in secret
        ? await passwordMatches(secret.password, stored.password)
        : secret.passwordHash === stored.password;
    if (same) return false;
    return this.setPassword(username, secret);
  }

  async get(username: string): Promise<PlatformUserRecord | undefined> {
    const raw = await this.store.get(this.keys.platformUser(username));
    return raw === null ? undefined : publicView(JSON.parse(raw) as StoredPlatformUser);
  }

  async list(): Promise<PlatformUserRecord[]> {
    const names = (await this.store.setMembers(this.keys.platformUserIndex())).sort();
    const users = await Promise.all(names.map((n) => this.get(n)));
    return users.filter((u): u is PlatformUserRecord => u !== undefined);
  }

  /** Sets a user's password; false when there is no such user. */
  async setPassword(
    username: string,
    secret: { password: string } | { passwordHash: string },
  ): Promise<boolean> {
    const key = this.keys.platformUser(username);
    for (let attempt = 0; attempt < 10; attempt++) {
      const raw = await this.store.get(key);
      if (raw === null) return false;
      const password = "password" in secret ? await hashPassword(secret.password) : secret.passwordHash;
      const next = JSON.stringify({ ...(JSON.parse(raw) as StoredPlatformUser), password });
      if (await this.store.compareAndSet(key, raw, next)) return true;
    }
    throw new Error(`platform user ${username}: too many concurrent writers`);
  }

  async delete(username: string): Promise<boolean> {
    await this.store.setRemove(this.keys.platformUserIndex(), username);
    return (await this.store.del(this.keys.platformUser(username))) > 0;
  }

  /** The user whose password this is; undefined otherwise, in about the same time either way. */
  async verify(username: string, password: string): Promise<PlatformUserRecord | undefined> {
    const raw = await this.store.get(this.keys.platformUser(username));
    if (raw === null) {
      await passwordMatches(password, await (decoy ??= hashPassword("decoy")));
      return undefined;
    }
    const user = JSON.parse(raw) as StoredPlatformUser;
    return (await passwordMatches(password, user.password)) ? publicView(user) : undefined;
  }
}

function publicView(user: StoredPlatformUser): PlatformUserRecord {
  return { username: user.username, createdAt: user.createdAt };
}
