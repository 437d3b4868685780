// The token cache of `portico connect` (docs/connect.md): one JSON file per server URL under the
// user's config directory, the directory 0700 and each file 0600, written whole and renamed into
// place so a crash never leaves half a file.
import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** What is kept for one server: the client it signed in as and the tokens it got. */
export interface CachedLogin {
  readonly server: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** Epoch milliseconds; absent when the server did not say. */
  readonly expiresAtMs?: number;
}

export class TokenCache {
  readonly #dir: string;

  constructor(configDir: string) {
    this.#dir = join(configDir, "tokens");
  }

  /** The file of one server URL: a hash, so no URL character reaches the file system. */
  fileFor(server: string): string {
    const name = createHash("sha256").update(server).digest("hex").slice(0, 32);
    return join(this.#dir, `${name}.json`);
  }

  async load(server: string): Promise<CachedLogin | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileFor(server), "utf8");
    } catch {
      return undefined;
    }
    try {
      const entry = JSON.parse(text) as CachedLogin;
      return entry.server === server && typeof entry.accessToken === "string" ? entry : undefined;
    } catch {
      return undefined; // a damaged file means signing in again, not failing
    }
  }

  async save(entry: CachedLogin): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    await chmod(this.#dir, 0o700);
    const file = this.fileFor(entry.server);
    const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temporary, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, file);
  }

  async forget(server: string): Promise<void> {
    await rm(this.fileFor(server), { force: true });
  }
}
