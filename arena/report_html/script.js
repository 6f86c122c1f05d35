"use strict";
(function () {
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const N = D.bots.length, ROW = {}, RANK = {};
  D.rows.forEach((r, i) => { ROW[r.bot] = r; RANK[r.bot] = i; });
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#bcbd22", "#7f7f7f"];
  const TOP = Math.min(5, N), MAX_PICKED = 8, LIMIT = N > 40 ? 25 : N, GRID_ALL = 30, GRID_TOP = 12;
  const RDYLGN = ["#a50026", "#d73027", "#f46d43", "#fdae61", "#fee08b", "#ffffbf", "#d9ef8b", "#a6d96a",
    "#66bd63", "#1a9850", "#006837"].map(h => [1, 3, 5].map(k => parseInt(h.substr(k, 2), 16)));
  const $ = id => document.getElementById(id);
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const probe = document.createElement("div");
  probe.innerHTML = "<svg></svg>";
  const SVG = probe.firstChild.namespaceURI;  // the SVG namespace, without an address in the page
  const sv = (tag, attrs, text) => {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  function decode(b64, kind) {
    const s = atob(b64), buf = new ArrayBuffer(s.length), u8 = new Uint8Array(buf);
    for (let i = 0; i < s.length; i++) u8[i] = s.charCodeAt(i);
    if (kind === "u8") return u8;
    const dv = new DataView(buf), n = s.length / 2, out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = kind === "i16" ? dv.getInt16(2 * i, true) : dv.getUint16(2 * i, true);
    return out;
  }
  const H = D.history, P = H.x.length, MU = decode(H.mu, "i16"), SG = decode(H.sigma, "i16");
  const C = D.cross, CN = C.n, CELLS = decode(C.score, "u8"), COUNTS = C.count ? decode(C.count, "u16") : null;
  const cellScore = (i, j) => { const v = CELLS[i * CN + j]; return v === C.none ? null : v / C.scale; };
  function heat(s) {
    const t = Math.max(0, Math.min(1, s)) * 10, k = Math.min(9, Math.floor(t)), f = t - k;
    const a = RDYLGN[k], b = RDYLGN[k + 1];
    return [0, 1, 2].map(c => Math.round(a[c] + (b[c] - a[c]) * f));
  }
  const rgb = c => "rgb(" + c.join(",") + ")";

  // ------------------------------------------------------------ selection
  let picked = [], focus = N ? D.bots[0] : null, showAll = false, query = "";
  const colour = new Map();
  function shown() {
    const out = D.bots.slice(0, TOP);
    for (const b of picked) if (!out.includes(b)) out.push(b);
    return out;
  }
  function assignColours() {
    const s = shown();
    for (const b of [...colour.keys()]) if (!s.includes(b)) colour.delete(b);
    const used = new Set(colour.values());
    for (const b of s) if (!colour.has(b)) {
      const c = PALETTE.find(p => !used.has(p)) || PALETTE[colour.size % PALETTE.length];
      colour.set(b, c); used.add(c);
    }
  }
  function pick(b, toggle) {
    if (!(b in ROW)) return;
    const i = picked.indexOf(b);
    if (i >= 0 && toggle) picked.splice(i, 1);
    else if (i < 0) { picked.push(b); if (picked.length > MAX_PICKED) picked.shift(); }
    focus = b;
    update();
  }
  window.reportPick = b => pick(b, false);

  // ------------------------------------------------------------ ticks
  function niceTicks(lo, hi, maxCount) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / Math.max(1, maxCount), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw) || 10 * mag;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toFixed(10));
    return out;
  }
  function fmt(v) {
    const a = Math.abs(v);
    if (a >= 1e6) return +(v / 1e6).toFixed(2) + "M";
    if (a >= 1e4) return +(v / 1e3).toFixed(1) + "k";
    return String(+v.toFixed(2));
  }

  // ------------------------------------------------------------ rating plot
  function ratingPlot() {
    const box = $("rating-plot"); if (!box) return;
    box.textContent = "";
    const W = Math.max(320, box.clientWidth || 900), Hh = 330, m = {l: 54, r: 14, t: 10, b: 42};
    const pw = W - m.l - m.r, ph = Hh - m.t - m.b, s = shown();
    const svg = sv("svg", {width: W, height: Hh, viewBox: "0 0 " + W + " " + Hh, role: "img",
      "aria-label": "TrueSkill rating over the matches of " + s.join(", ")});
    let lo = Infinity, hi = -Infinity;
    for (const b of s) {
      const r = RANK[b] * P;
      for (let k = 0; k < P; k++) {
        lo = Math.min(lo, (MU[r + k] - SG[r + k]) / 100); hi = Math.max(hi, (MU[r + k] + SG[r + k]) / 100);
      }
    }
    if (!isFinite(lo)) { lo = 0; hi = 50; }
    const pad = (hi - lo) * 0.04 || 1; lo -= pad; hi += pad;
    const xmax = Math.max(1, H.rated);
    const X = v => m.l + pw * v / xmax, Y = v => m.t + ph * (1 - (v - lo) / (hi - lo));
    const g = sv("g", {class: "axes"});
    const xt = niceTicks(0, xmax, Math.floor(pw / 90)), yt = niceTicks(lo, hi, Math.floor(ph / 38));
    for (const v of yt) {
      g.appendChild(sv("line", {x1: m.l, x2: m.l + pw, y1: Y(v), y2: Y(v), class: "grid"}));
      g.appendChild(sv("text", {x: m.l - 7, y: Y(v) + 4, "text-anchor": "end", class: "tick ytick"}, fmt(v)));
    }
    for (const v of xt) {
      g.appendChild(sv("line", {x1: X(v), x2: X(v), y1: m.t, y2: m.t + ph, class: "grid"}));
      g.appendChild(sv("text", {x: X(v), y: m.t + ph + 17, "text-anchor": "middle", class: "tick xtick"}, fmt(v)));
    }
    g.appendChild(sv("text", {x: m.l + pw / 2, y: Hh - 5, "text-anchor": "middle", class: "axis-label"},
      "rated matches (replay order)"));
    g.appendChild(sv("text", {x: 13, y: m.t + ph / 2, transform: "rotate(-90 13 " + (m.t + ph / 2) + ")",
      "text-anchor": "middle", class: "axis-label"}, "μ (band: μ ± σ)"));
    svg.appendChild(g);
    for (const b of s) {
      const r = RANK[b] * P, c = colour.get(b);
      let top = "", bot = "", line = "";
      for (let k = 0; k < P; k++) {
        const x0 = X(H.x[k]), x1 = k + 1 < P ? X(H.x[k + 1]) : x0, mu = MU[r + k] / 100, sg = SG[r + k] / 100;
        line += (k ? "L" : "M") + x0.toFixed(1) + " " + Y(mu).toFixed(1) + "L" + x1.toFixed(1) + " " + Y(mu).toFixed(1);
        top += (k ? "L" : "M") + x0.toFixed(1) + " " + Y(mu + sg).toFixed(1) + "L" + x1.toFixed(1) + " " + Y(mu + sg).toFixed(1);
        bot = "L" + x1.toFixed(1) + " " + Y(mu - sg).toFixed(1) + "L" + x0.toFixed(1) + " " + Y(mu - sg).toFixed(1) + bot;
      }
      svg.appendChild(sv("path", {d: top + bot + "Z", fill: c, "fill-opacity": 0.13, stroke: "none", class: "band"}));
      const p = sv("path", {d: line, fill: "none", stroke: c, "stroke-width": b === focus ? 3 : 2,
        class: "rating-line", "data-bot": b});
      p.appendChild(sv("title", {}, b));
      svg.appendChild(p);
    }
    box.appendChild(svg);
    const leg = $("rating-legend"); leg.textContent = "";
    for (const b of s) {
      const li = el("li", {"data-bot": b, class: picked.includes(b) ? "picked" : "top"});
      li.appendChild(el("span", {class: "sw", style: "background:" + colour.get(b)}));
      li.appendChild(el("span", {}, "#" + (RANK[b] + 1) + " " + b));
      if (picked.includes(b)) {
        const x = el("button", {type: "button", title: "remove " + b, class: "rm"}, "×");
        x.addEventListener("click", () => { picked.splice(picked.indexOf(b), 1); update(); });
        li.appendChild(x);
      }
      leg.appendChild(li);
    }
  }

  // ------------------------------------------------------------ crosstable
  function gridTable(bots) {
    const t = el("table", {id: "cross-grid", class: "grid-table"}), hr = el("tr");
    hr.appendChild(el("th", {class: "l"}, "row vs column"));
    for (const b of bots) hr.appendChild(el("th", {title: b, class: "colhead"}, "#" + (RANK[b] + 1)));
    t.appendChild(el("thead")).appendChild(hr);
    const tb = t.appendChild(el("tbody"));
    for (const a of bots) {
      const tr = el("tr", {"data-bot": a}), i = RANK[a];
      tr.appendChild(el("th", {class: "l rowhead", title: a}, "#" + (i + 1) + " " + a));
      for (const b of bots) {
        const j = RANK[b], s = i < CN && j < CN && i !== j ? cellScore(i, j) : null;
        const td = el("td", {class: "cell"});
        if (s !== null) {
          const c = heat(s); td.style.background = rgb(c);
          td.style.color = s < 0.18 || s > 0.82 ? "#fff" : "#0f172a";
          td.textContent = s.toFixed(2);
          if (COUNTS && bots.length <= 12) td.appendChild(el("small", {}, "n=" + COUNTS[i * CN + j]));
          td.title = a + " vs " + b + ": " + s.toFixed(3) + (COUNTS ? " over " + COUNTS[i * CN + j] + " matches" : "");
        } else td.className = "cell empty";
        tr.appendChild(td);
      }
      tb.appendChild(tr);
    }
    return t;
  }
  function axisTicks(box, S, n, horizontal) {
    const ticks = niceTicks(1, n, Math.floor(S / (horizontal ? 48 : 26))).filter(v => v >= 1 && v === Math.round(v));
    if (ticks[0] !== 1) ticks.unshift(1);
    const cell = S / n;
    let last = -Infinity;
    for (const v of ticks) {
      const at = (v - 0.5) * cell;
      if (at - last < (horizontal ? 40 : 18)) continue;  // 1 and the first nice tick too close
      last = at;
      const d = el("div", {class: "tick " + (horizontal ? "xtick" : "ytick")}, "#" + v);
      d.style[horizontal ? "left" : "top"] = at + "px";
      box.appendChild(d);
    }
  }
  function heatmap() {
    const wrap = $("cross-heat"); if (!wrap || N <= GRID_ALL) return;
    wrap.textContent = "";
    const S = Math.min(560, Math.max(240, (wrap.clientWidth || 600) - 50));
    const plot = el("div", {class: "heat-plot"}); plot.style.width = S + "px"; plot.style.height = S + "px";
    const cv = el("canvas", {width: CN, height: CN, id: "heat-canvas"});
    cv.style.width = S + "px"; cv.style.height = S + "px";
    const ctx = cv.getContext("2d"), img = ctx.createImageData(CN, CN);
    for (let i = 0; i < CN * CN; i++) {
      const v = CELLS[i], c = v === C.none ? [241, 245, 249] : heat(v / C.scale);
      img.data[4 * i] = c[0]; img.data[4 * i + 1] = c[1]; img.data[4 * i + 2] = c[2]; img.data[4 * i + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    plot.appendChild(cv);
    if (focus !== null && RANK[focus] < CN) {
      const hl = el("div", {class: "heat-focus"});
      hl.style.top = (RANK[focus] * S / CN) + "px"; hl.style.height = Math.max(2, S / CN) + "px";
      plot.appendChild(hl);
    }
    const xa = el("div", {class: "heat-xaxis"}), ya = el("div", {class: "heat-yaxis"});
    axisTicks(xa, S, CN, true); axisTicks(ya, S, CN, false);
    plot.appendChild(xa); plot.appendChild(ya);
    const cap = $("heat-caption");
    const at = e => {
      const r = cv.getBoundingClientRect();
      return [Math.floor((e.clientY - r.top) / r.height * CN), Math.floor((e.clientX - r.left) / r.width * CN)];
    };
    cv.addEventListener("mousemove", e => {
      const [i, j] = at(e);
      if (i < 0 || j < 0 || i >= CN || j >= CN) return;
      const s = i === j ? null : cellScore(i, j);
      cap.textContent = "#" + (i + 1) + " " + D.bots[i] + " vs #" + (j + 1) + " " + D.bots[j] + ": " +
        (s === null ? "never met" : s.toFixed(3));
    });
    cv.addEventListener("click", e => { const [i] = at(e); if (i >= 0 && i < CN) pick(D.bots[i], false); });
    wrap.appendChild(plot);
  }
  function focusRow() {
    const box = $("cross-row"); if (!box || N <= GRID_ALL) return;
    box.textContent = "";
    if (focus === null) return;
    const i = RANK[focus];
    box.appendChild(el("h3", {}, "#" + (i + 1) + " " + focus + " against each opponent"));
    if (i >= CN) { box.appendChild(el("p", {class: "note"}, "outside the first " + CN + " bots: see its page")); return; }
    const met = [];
    for (let j = 0; j < CN; j++) { const s = j === i ? null : cellScore(i, j); if (s !== null) met.push([s, j]); }
    const strip = el("canvas", {width: CN, height: 1, class: "row-strip"});
    const ctx = strip.getContext("2d"), img = ctx.createImageData(CN, 1);
    for (let j = 0; j < CN; j++) {
      const s = j === i ? null : cellScore(i, j), c = s === null ? [241, 245, 249] : heat(s);
      img.data.set([c[0], c[1], c[2], 255], 4 * j);
    }
    ctx.putImageData(img, 0, 0);
    box.appendChild(strip);
    box.appendChild(el("p", {class: "note"}, "met " + met.length + " of " + (N - 1) +
      " opponents; the strip runs from #1 (left) to #" + CN + " (right)."));
    met.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const list = (title, items) => {
      const t = el("table", {class: "mini"}), hr = el("tr");
      hr.appendChild(el("th", {class: "l"}, title)); hr.appendChild(el("th", {}, "score"));
      t.appendChild(el("thead")).appendChild(hr);
      const tb = t.appendChild(el("tbody"));
      for (const [s, j] of items) {
        const tr = el("tr", {"data-bot": D.bots[j]});
        tr.appendChild(el("td", {class: "l"}, "#" + (j + 1) + " " + D.bots[j]));
        const td = el("td", {}, s.toFixed(2)); td.style.background = rgb(heat(s));
        td.style.color = s < 0.18 || s > 0.82 ? "#fff" : "#0f172a"; tr.appendChild(td);
        tr.addEventListener("click", () => pick(D.bots[j], false));
        tb.appendChild(tr);
      }
      return t;
    };
    const two = el("div", {class: "two"});
    if (met.length <= 10) two.appendChild(list("opponents met, hardest first", met));
    else {
      two.appendChild(list("hardest opponents", met.slice(0, 5)));
      two.appendChild(list("easiest opponents", met.slice(-5).reverse()));
    }
    box.appendChild(two);
  }
  function crosstable() {
    const g = $("cross-grid-box"); if (!g) return;
    g.textContent = "";
    let bots = N <= GRID_ALL ? D.bots.slice() : D.bots.slice(0, GRID_TOP);
    if (N > GRID_ALL && focus !== null && !bots.includes(focus)) bots.push(focus);
    g.appendChild(gridTable(bots));
    heatmap(); focusRow();
  }

  // ------------------------------------------------------------ tables: search, sort, paging
  const tables = ["leaderboard", "reliability"].map($).filter(Boolean);
  function filterRows() {
    const q = query.trim().toLowerCase();
    let hits = 0;
    for (const t of tables) {
      let shownRows = 0;
      for (const tr of t.tBodies[0].rows) {
        const b = tr.getAttribute("data-bot"), r = RANK[b];
        const match = q ? b.toLowerCase().includes(q) : true;
        const vis = q ? match : (showAll || r < LIMIT || picked.includes(b));
        tr.hidden = !vis;
        tr.classList.toggle("picked", picked.includes(b));
        const sw = tr.querySelector(".sw"); if (sw) sw.style.background = colour.get(b) || "transparent";
        if (vis) shownRows++;
        if (t.id === "leaderboard" && q && match) hits++;
      }
      t.setAttribute("data-shown", shownRows);
    }
    const c = $("search-count");
    if (c) c.textContent = q ? hits + " of " + N + " bots match" : (showAll || N <= LIMIT ? "all " + N + " bots" :
      "top " + LIMIT + " of " + N + " bots" + (picked.length ? " and the picked ones" : ""));
    const btn = $("show-all"); if (btn) btn.textContent = showAll ? "show the top " + LIMIT : "show all " + N;
  }
  function sortBy(t, key, th) {
    const dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
    for (const h of t.tHead.rows[0].cells) h.removeAttribute("data-dir");
    th.setAttribute("data-dir", dir);
    const val = b => { const r = ROW[b]; return key === "bot" ? b : (r && r[key] != null ? r[key] : null); };
    const rows = [...t.tBodies[0].rows];
    rows.sort((x, y) => {
      const a = val(x.getAttribute("data-bot")), b = val(y.getAttribute("data-bot"));
      if (a === null || b === null) return (a === null) - (b === null);
      const c = typeof a === "string" ? a.localeCompare(b) : a - b;
      return dir === "asc" ? c : -c;
    });
    for (const r of rows) t.tBodies[0].appendChild(r);
  }
  for (const t of tables) {
    for (const th of t.tHead.rows[0].cells) {
      const key = th.getAttribute("data-key"); if (!key) continue;
      th.classList.add("sortable"); th.title = "sort by " + th.textContent;
      th.addEventListener("click", () => sortBy(t, key, th));
    }
    t.tBodies[0].addEventListener("click", e => {
      if (e.target.closest("a")) return;
      const tr = e.target.closest("tr[data-bot]"); if (tr) pick(tr.getAttribute("data-bot"), true);
    });
  }
  const search = $("search");
  if (search) {
    search.addEventListener("input", () => {
      query = search.value;
      const exact = D.bots.find(b => b.toLowerCase() === query.trim().toLowerCase());
      if (exact) pick(exact, false); else filterRows();
    });
    search.addEventListener("keydown", e => {
      if (e.key !== "Enter") return;
      const q = query.trim().toLowerCase(), first = D.bots.find(b => b.toLowerCase().includes(q));
      if (q && first) pick(first, false);
    });
  }
  const btn = $("show-all");
  if (btn) btn.addEventListener("click", () => { showAll = !showAll; filterRows(); });

  function update() { assignColours(); ratingPlot(); crosstable(); filterRows(); }
  let resizeTimer = null;
  window.addEventListener("resize", () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(update, 150); });
  update();
  document.body.setAttribute("data-ready", "1");
})();
