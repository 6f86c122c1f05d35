#!/usr/bin/env node
// A random bot in JavaScript: protocol v1 needs nothing but JSON lines on stdin/stdout.
// Run: node bots/js_random_bot.js   (check it: arena doctor agram -- node bots/js_random_bot.js)
"use strict";

// mulberry32: a small seeded PRNG, reseeded from `seed` at every `start` (reproducible play)
function rng(seed) {
  let a = Number(BigInt.asUintN(32, BigInt(seed))) >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let random = rng(0);
let buffer = "";

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

function handle(line) {
  if (!line.trim()) return;
  // seeds are 64-bit: keep them exact by reading the digits, not a float
  const seedMatch = /"seed":\s*(\d+)/.exec(line);
  const msg = JSON.parse(line);
  if (msg.type === "start") {
    random = rng(seedMatch ? seedMatch[1] : 0);
    send({ type: "ready", protocol: 1, name: "js-random", version: "1" });
  } else if (msg.type === "act") {
    const legal = msg.legal;
    send({ type: "action", id: msg.id, action: legal[Math.floor(random() * legal.length)] });
  }
  // "end" and unknown messages need no reply
}

process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let i;
  while ((i = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, i);
    buffer = buffer.slice(i + 1);
    handle(line);
  }
});
process.stdin.on("end", () => process.exit(0));
