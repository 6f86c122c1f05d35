#!/usr/bin/env node
// {name}: a cardarena bot in JavaScript (protocol v1: one JSON object per line on stdin/stdout).
// Check it:  arena doctor agram -- node {path}
// Rules: answer every "start" with "ready", every "act" with one of its "legal" actions
// (echo its "id"); one line per message, ending in "\n"; logs go to stderr (console.error).
"use strict";

// mulberry32: a small seeded PRNG, reseeded from the match's "seed" at every "start"
function rng(seed) {{
  let a = Number(BigInt.asUintN(32, BigInt(seed))) >>> 0;
  return function () {{
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }};
}}

let random = rng(0);
let seat = 0;

function send(obj) {{
  process.stdout.write(JSON.stringify(obj) + "\n");
}}

// msg.observation: everything your seat has seen (`arena rules GAME` lists the fields);
// msg.legal: the legal actions as strings. Replace the random choice with your strategy.
function choose(observation, legal) {{
  return legal[Math.floor(random() * legal.length)];
}}

function handle(line) {{
  if (!line.trim()) return;
  const seedMatch = /"seed":\s*(\d+)/.exec(line); // 64-bit seeds: read the digits, not a float
  const msg = JSON.parse(line);
  if (msg.type === "start") {{
    random = rng(seedMatch ? seedMatch[1] : 0);
    seat = msg.seat;
    send({{ type: "ready", protocol: 1, name: "{name}", version: "1" }});
  }} else if (msg.type === "act") {{
    send({{ type: "action", id: msg.id, action: choose(msg.observation, msg.legal) }});
  }} else if (msg.type === "end") {{
    console.error(`{name}: match over, rank ${{msg.outcome.ranks[seat]}}`);
  }}
}}

// read line by line: never wait for the end of input, the arena keeps stdin open
let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {{
  buffer += chunk;
  let i;
  while ((i = buffer.indexOf("\n")) >= 0) {{
    const line = buffer.slice(0, i);
    buffer = buffer.slice(i + 1);
    handle(line);
  }}
}});
process.stdin.on("end", () => process.exit(0)); // the arena closed stdin: exit cleanly
