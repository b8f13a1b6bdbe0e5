// Runs the Khronos glTF validator on one .glb and prints its report summary as JSON.
// Usage: NODE_PATH=$HOME/.cache/talus-tools/node_modules node validate_glb.js file.glb
const fs = require("fs");
const validator = require("gltf-validator");
const file = process.argv[2];
validator
  .validateBytes(new Uint8Array(fs.readFileSync(file)))
  .then((report) => {
    console.log(JSON.stringify({ issues: report.issues, info: report.info }));
  })
  .catch((e) => {
    console.error("validator failed:", e);
    process.exit(2);
  });
