// The environment `portico connect` reads (docs/connect.md): where tokens are cached and how the
// browser is opened. Separate from env.ts, which configures the server.
import { homedir } from "node:os";
import { join } from "node:path";

export interface ConnectEnv {
  /** Directory of the token cache (0700; files 0600). */
  readonly configDir: string;
  /** A command run with the authorization URL as its last argument instead of the system browser. */
  readonly browserCommand: string | undefined;
  readonly platform: NodeJS.Platform;
}

/**
 * PORTICO_CONNECT_CONFIG_DIR, else the platform's config directory: $XDG_CONFIG_HOME/portico or
 * ~/.config/portico (Linux and others), ~/Library/Application Support/portico (macOS),
 * %APPDATA%\portico (Windows).
 */
export function loadConnectEnv(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): ConnectEnv {
  const home = env.HOME ?? env.USERPROFILE ?? homedir();
  let configDir = env.PORTICO_CONNECT_CONFIG_DIR;
  if (!configDir) {
    if (platform === "win32") configDir = join(env.APPDATA ?? join(home, "AppData", "Roaming"), "portico");
    else if (platform === "darwin") configDir = join(home, "Library", "Application Support", "portico");
    else configDir = join(env.XDG_CONFIG_HOME || join(home, ".config"), "portico");
  }
  const browserCommand = env.PORTICO_CONNECT_BROWSER?.trim() || undefined;
  return { configDir, browserCommand, platform };
}
