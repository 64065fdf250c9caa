// validate_speedscope.js - check an ipscope speedscope export the way the
// export tests need: valid against the JSON schema that the speedscope npm
// package ships, internally consistent, and summarised per thread and per
// function so the shell test can compare its numbers with `analyze flat`.
//
// usage: node validate_speedscope.js NODE_MODULES FILE.json
// Prints on success (tab-separated; values in the file's unit):
//   profile NAME TOTAL          one per profile, in file order
//   function NAME SELF CUM      summed over all profiles; CUM counts a
//                               function once per sample, as pprof does
// Exits 1 with a message on stderr when something is wrong.
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, file] = process.argv.slice(2);
if (!modules || !file) {
  console.error('usage: node validate_speedscope.js NODE_MODULES FILE.json');
  process.exit(2);
}
const Ajv = require(path.resolve(modules, 'ajv'));
const schema = JSON.parse(fs.readFileSync(
    path.resolve(modules, 'speedscope/dist/release/file-format-schema.json'), 'utf8'));

function fail(message) {
  console.error(`${file}: ${message}`);
  process.exit(1);
}

let doc;
try {
  doc = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (e) {
  fail(`not JSON: ${e.message}`);
}
const ajv = new Ajv({allErrors: true, strict: false});
const validate = ajv.compile(schema);
if (!validate(doc))
  fail(`schema: ${ajv.errorsText(validate.errors)}`);

if (!/^ipscope@\d+\.\d+\.\d+/.test(doc.exporter || ''))
  fail(`exporter is '${doc.exporter}'`);
const frames = doc.shared.frames;
const selfOf = new Map(), cumOf = new Map();
let heaviest = -1, heaviestTotal = -1;
doc.profiles.forEach((profile, p) => {
  if (profile.type !== 'sampled')
    fail(`profile ${p} is ${profile.type}, not sampled`);
  if (profile.samples.length !== profile.weights.length)
    fail(`profile ${p}: ${profile.samples.length} samples, ${profile.weights.length} weights`);
  let total = 0;
  profile.samples.forEach((stack, i) => {
    const weight = profile.weights[i];
    if (!Number.isInteger(weight) || weight <= 0)
      fail(`profile ${p} sample ${i}: weight ${weight}`);
    total += weight;
    const seen = new Set();
    stack.forEach((f) => {
      if (!Number.isInteger(f) || f < 0 || f >= frames.length)
        fail(`profile ${p} sample ${i}: frame ${f} out of range`);
      const name = frames[f].name;
      if (!seen.has(name)) {
        seen.add(name);
        cumOf.set(name, (cumOf.get(name) || 0) + weight);
      }
    });
    if (stack.length) {
      const leaf = frames[stack[stack.length - 1]].name;
      selfOf.set(leaf, (selfOf.get(leaf) || 0) + weight);
    }
  });
  if (total !== profile.endValue - profile.startValue)
    fail(`profile ${p}: weights sum to ${total}, endValue says ${profile.endValue}`);
  if (total > heaviestTotal) {
    heaviest = p;
    heaviestTotal = total;
  }
  console.log(`profile\t${profile.name}\t${total}`);
});
if (doc.profiles.length && doc.activeProfileIndex !== heaviest)
  fail(`activeProfileIndex ${doc.activeProfileIndex}, heaviest is ${heaviest}`);
for (const name of [...cumOf.keys()].sort())
  console.log(`function\t${name}\t${selfOf.get(name) || 0}\t${cumOf.get(name)}`);
