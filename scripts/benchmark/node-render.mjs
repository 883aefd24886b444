// Renders a page with the same server bundle goja runs, under Node, and
// prints the median time in milliseconds. Usage: node node-render.mjs bundle props.json page runs
import { readFileSync } from "node:fs";
import vm from "node:vm";

const [bundle, propsFile, page, runsArg] = process.argv.slice(2);
vm.runInThisContext(readFileSync(bundle, "utf8"), { filename: bundle });
const props = readFileSync(propsFile, "utf8");
const runs = Number(runsArg || 200);
for (let i = 0; i < 20; i++) globalThis.marqueeRender(page, props); // warm up the JIT
const times = [];
for (let i = 0; i < runs; i++) {
  const start = process.hrtime.bigint();
  globalThis.marqueeRender(page, props);
  times.push(Number(process.hrtime.bigint() - start) / 1e6);
}
times.sort((a, b) => a - b);
console.log(times[Math.floor(times.length / 2)].toFixed(3));
