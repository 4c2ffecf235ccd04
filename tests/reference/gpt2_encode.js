// GPT-2 token ids from an independent encoder (the npm package gpt-3-encoder) for the tokenizer
// tests: node gpt2_encode.js <package dir> <texts.json> prints one JSON array of id arrays.
const fs = require('fs');
const path = require('path');
const { encode } = require(path.resolve(process.argv[2], 'Encoder.js'));
const texts = JSON.parse(fs.readFileSync(process.argv[3], 'utf-8'));
process.stdout.write(JSON.stringify(texts.map((t) => encode(t))) + '\n');
