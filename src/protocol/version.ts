// Portico's own name and version, as serverInfo and upstream clientInfo carry them.
import { readFileSync } from "node:fs";

// package.json sits two levels above src/protocol/ and dist/protocol/.
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

export const PORTICO_VERSION = pkg.version;
export const PORTICO_INFO = Object.freeze({ name: "portico", version: PORTICO_VERSION });
