// `npm run build`'s second step: the data files of src/ that tsc does not copy (the word vectors of
// src/search/) go beside the compiled modules in dist/, where those modules read them. The console's
// browser sources (src/console/app/) are not data: Vite builds them into dist/console/ (docs/console.md).
import { cpSync } from "node:fs";
import { join } from "node:path";

const CONSOLE_APP = join("src", "console", "app");

cpSync("src", "dist", { recursive: true, filter: (path) => !/\.ts$/.test(path) && path !== CONSOLE_APP });
