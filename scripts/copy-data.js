// `npm run build`'s second step: the data files of src/ that tsc does not copy (the word vectors of
// src/search/) go beside the compiled modules in dist/, where those modules read them.
import { cpSync } from "node:fs";

cpSync("src", "dist", { recursive: true, filter: (path) => !/\.ts$/.test(path) });
