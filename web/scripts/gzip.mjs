// After `vite build`: write a .gz beside every asset (served by fathom when the browser accepts gzip)
// and print the first-load size (index.html + the JS and CSS it references), raw and gzipped.
import { readFileSync, writeFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";

const out = new URL("../../src/fathom/server/static/", import.meta.url).pathname;
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
const sizes = {};
for (const file of walk(out)) {
  if (!/\.(js|css|html|svg)$/.test(file)) continue;
  const raw = readFileSync(file);
  const gz = gzipSync(raw, { level: 9 });
  if (!file.endsWith("index.html")) writeFileSync(file + ".gz", gz);
  sizes[file.slice(out.length)] = [raw.length, gz.length];
}
const html = readFileSync(join(out, "index.html"), "utf8");
const first = ["index.html", ...[...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1])];
let raw = 0, gz = 0;
for (const f of first) { raw += sizes[f]?.[0] ?? 0; gz += sizes[f]?.[1] ?? 0; }
console.log(`first load: ${first.length} files, ${(raw / 1024).toFixed(1)} KiB raw, ${(gz / 1024).toFixed(1)} KiB gzip`);
for (const [f, [r, g]] of Object.entries(sizes)) console.log(`  ${f}: ${(r / 1024).toFixed(1)} KiB, gzip ${(g / 1024).toFixed(1)} KiB`);

// The hash of the sources this build came from; tests/console checks it against web/ so a source change
// without a rebuild (stale committed assets) fails CI.
const web = new URL("..", import.meta.url).pathname;
const sources = [...walk(join(web, "src")), ...["index.html", "package-lock.json", "vite.config.ts"].map((f) => join(web, f))]
  .map((f) => relative(web, f).split("\\").join("/"))
  .sort();
const hash = createHash("sha256");
for (const f of sources) {
  hash.update(f + "\0");
  hash.update(readFileSync(join(web, f)));
  hash.update("\0");
}
writeFileSync(join(out, "build-info.json"), JSON.stringify({ sourceHash: hash.digest("hex"), files: sources.length }) + "\n");
