// Bundles src/index.ts into ONE ES module exporting render().
// Usage: node build.mjs [outfile]   (default ../tb_graph_plugin/static/index.js)
// Deterministic: no timestamps, no absolute paths, no source maps in the output.
import * as esbuild from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const outfile = path.resolve(process.argv[2] ?? path.join(here, "..", "tb_graph_plugin", "static", "index.js"));

await esbuild.build({
  absWorkingDir: here,
  entryPoints: ["src/index.ts"],
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["es2020"],
  minify: true,
  legalComments: "none",
  charset: "utf8",
  sourcemap: false,
  outfile,
  logLevel: "warning",
});
