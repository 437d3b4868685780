// The console's build (docs/console.md): Preact through Vite into dist/console/app/, asset names
// hashed, served under /admin/console/ by src/console/assets.ts. No inline scripts or styles, so
// the page runs under a CSP of 'self' only: CSS goes to a file, never into a <style> tag.
import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL("src/console/app/", import.meta.url));

export default defineConfig({
  root,
  base: "/admin/console/",
  plugins: [preact()],
  logLevel: "warn",
  build: {
    // src/console/*.ts compile into dist/console/ (tsc): the app builds beside them, as src/ has it.
    outDir: fileURLToPath(new URL("dist/console/app/", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    // Inlined assets would be data: URLs in CSS or scripts; everything stays a file of its own.
    assetsInlineLimit: 0,
    cssCodeSplit: false,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: "es2022",
  },
});
