#!/usr/bin/env node
// Runs the Khronos glTF validator (the npm package gltf-validator, installed here by
// `make setup`) on one .gltf or .glb file and prints its report as JSON on stdout.
//
//   node tools/gltf-validator/validate.js FILE
//
// Exit status: 0 when the file was validated (whatever the report says: read its
// issues.numErrors), 2 when it could not be (no such file, the validator refused to start).
// External buffers and images are read only from the file's own folder.
"use strict";

const fs = require("fs");
const path = require("path");
const validator = require("gltf-validator");

function main(argv) {
  if (argv.length !== 1) {
    process.stderr.write("usage: node validate.js FILE\n");
    return Promise.resolve(2);
  }
  const file = path.resolve(argv[0]);
  const folder = path.dirname(file);
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    process.stderr.write(`${file}: ${err.message}\n`);
    return Promise.resolve(2);
  }
  const external = (uri) => new Promise((resolve, reject) => {
    const target = path.resolve(folder, decodeURIComponent(uri));
    if (path.relative(folder, target).startsWith("..") || path.isAbsolute(path.relative(folder, target))) {
      reject(`${uri}: outside the model's folder`);
      return;
    }
    fs.readFile(target, (err, data) => (err ? reject(err.toString()) : resolve(new Uint8Array(data))));
  });
  return validator.validateBytes(new Uint8Array(bytes), {
    uri: path.basename(file),
    maxIssues: 0,
    writeTimestamp: false,
    externalResourceFunction: external,
  }).then((report) => {
    process.stdout.write(JSON.stringify(report) + "\n");
    return 0;
  }, (error) => {
    process.stderr.write(`${file}: the validator could not run: ${error}\n`);
    return 2;
  });
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
