// Where `portico connect` keeps its tokens (src/config/connect.ts): the override, then each
// platform's config directory; and the browser command.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConnectEnv } from "../../src/config/connect.js";

describe("loadConnectEnv", () => {
  const home = { HOME: "/home/ada" };
  const cases: Array<[string, NodeJS.ProcessEnv, NodeJS.Platform, string]> = [
    [
      "the override wins",
      { ...home, PORTICO_CONNECT_CONFIG_DIR: "/tmp/t", XDG_CONFIG_HOME: "/x" },
      "linux",
      "/tmp/t",
    ],
    [
      "XDG_CONFIG_HOME on Linux",
      { ...home, XDG_CONFIG_HOME: "/home/ada/.cfg" },
      "linux",
      "/home/ada/.cfg/portico",
    ],
    ["~/.config on Linux", home, "linux", "/home/ada/.config/portico"],
    [
      "an empty XDG_CONFIG_HOME is unset",
      { ...home, XDG_CONFIG_HOME: "" },
      "freebsd",
      "/home/ada/.config/portico",
    ],
    [
      "Application Support on macOS",
      { HOME: "/Users/ada" },
      "darwin",
      "/Users/ada/Library/Application Support/portico",
    ],
  ];
  for (const [label, env, platform, dir] of cases)
    it(label, () => assert.equal(loadConnectEnv(env, platform).configDir, dir));

  it("%APPDATA% on Windows", () => {
    const dir = loadConnectEnv(
      { APPDATA: "C:\\Users\\ada\\AppData\\Roaming", USERPROFILE: "C:\\Users\\ada" },
      "win32",
    );
    assert.match(dir.configDir, /^C:\\Users\\ada\\AppData\\Roaming[\\/]portico$/);
  });

  it("PORTICO_CONNECT_BROWSER, trimmed; blank means the system browser", () => {
    assert.equal(
      loadConnectEnv({ ...home, PORTICO_CONNECT_BROWSER: " firefox " }, "linux").browserCommand,
      "firefox",
    );
    assert.equal(
      loadConnectEnv({ ...home, PORTICO_CONNECT_BROWSER: "  " }, "linux").browserCommand,
      undefined,
    );
  });
});
