// Bundles the frontend: src/index.ts into ONE ES module exporting render(), and the scene
// worker src/worker/scene_worker.ts into a classic script beside it (scene_worker.js).
// Usage: node build.mjs [outfile]   (default ../tb_graph_plugin/static/index.js; the worker
// goes to the same folder). Deterministic: no timestamps, no absolute paths, no source maps.
import * as esbuild from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const outfile = path.resolve(process.argv[2] ?? path.join(here, "..", "tb_graph_plugin", "static", "index.js"));

const common = {
  absWorkingDir: here,
  bundle: true,
  platform: "browser",
  target: ["es2020"],
  minify: !process.env.GX_NO_MINIFY,
  legalComments: "none",
  charset: "utf8",
  sourcemap: false,
  logLevel: "warning",
};

await esbuild.build({ ...common, entryPoints: ["src/index.ts"], format: "esm", outfile });
await esbuild.build({
  ...common,
  entryPoints: ["src/worker/scene_worker.ts"],
  format: "iife",
  outfile: path.join(path.dirname(outfile), "scene_worker.js"),
});
