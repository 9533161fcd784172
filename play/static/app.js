// cardzoo's play page: the setup form, then the table as the server's view of your seat shows it.
// Everything drawn comes from that view (what your seat may see); moves go back as {seat, action}.
"use strict";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const $ = (id) => document.getElementById(id);
let catalog = {};
let view = null;
let socket = null;
// The game's secret token, from the reply that made the game: only in this page's memory (not in storage, where
// another tab or a later visitor could read it), sent with every request about the game.
let token = null;
let deadline = null;

// ---------------------------------------------------------------- cards
// A card of yours that cannot be played now, while some card can, is dimmed (``dim``).
function cardEl(code, { legal = null, small = false, extra = "", dim = false } = {}) {
  const el = document.createElement("div");
  el.className = "card" + (small ? " small" : "") + (extra ? " " + extra : "");
  if (code === null || code === undefined) {
    el.classList.add("gone");
  } else if (code === "back") {
    el.classList.add("back");
  } else if (code === "XR") {
    el.classList.add("rook");
    el.textContent = "ROOK";
  } else {
    const rank = code[0] === "T" ? "10" : code[0];
    el.innerHTML = `<span class="rank">${rank}</span><span class="suit">${SUITS[code[1]]}</span>`;
    if (code[1] === "H" || code[1] === "D") el.classList.add("red");
  }
  if (code && code !== "back") el.dataset.code = code;
  if (legal) {
    el.classList.add("legal");
    el.dataset.action = legal.action;
    el.title = legal.label;
    el.addEventListener("click", () => send(legal.action));
  } else if (dim) {
    el.classList.add("illegal");
  }
  return el;
}

function row(label, cards) {
  const div = document.createElement("div");
  div.className = "row";
  const name = document.createElement("span");
  name.className = "label";
  name.textContent = label;
  div.append(name, ...cards);
  return div;
}

function facts(pairs) {
  const p = document.createElement("div");
  p.className = "facts";
  for (const [k, v] of pairs) {
    const s = document.createElement("span");
    s.textContent = `${k}: ${v}`;
    p.append(s);
  }
  return p;
}

function legalByCode(kind = "card") {
  const out = {};
  for (const m of view.legal) if (m.kind === kind) out[m.code] = m;
  return out;
}

function trickCards(trick, label) {
  const div = document.createElement("div");
  div.className = "trick";
  div.append(label);
  for (const [who, code] of trick.cards) div.append(who + ":", cardEl(code, { small: true }));
  if (trick.winner) div.append(`${trick.winner} won`);
  return div;
}

// The trick being played, the last trick, and your hand with its legal cards (Rope Team and Rook).
function tricksAndHand(t, table) {
  const legal = legalByCode();
  const trick = document.createElement("div");
  trick.className = "row";
  if (t.led) trick.append(trickCards({ cards: [[t.led.by, t.led.card]] }, "this trick — "));
  if (view.last_trick) trick.append(trickCards(view.last_trick, "last trick — "));
  const dim = Object.keys(legal).length > 0;  // in Rook's bidding no card is playable: none is dimmed
  table.append(trick, row("your hand", t.hand.map((c) => cardEl(c, { legal: legal[c], dim }))));
}

function moveButtons(kinds) {
  const moves = $("moves");
  for (const m of view.legal) {
    if (!kinds.includes(m.kind)) continue;
    const b = document.createElement("button");
    b.textContent = m.label;
    b.dataset.action = m.action;
    b.className = "move";
    b.addEventListener("click", () => send(m.action));
    moves.append(b);
  }
}

// ---------------------------------------------------------------- the tables
// A game with no drawing of its own (a game added to the registry, with its seat view): the seat's view in words
// and a button per legal move.
function inWords(t, table) {
  table.append(Object.assign(document.createElement("pre"), { className: "in-words", textContent: view.text }));
  moveButtons([...new Set(view.legal.map((m) => m.kind))]);
}
function ropeTeam(t, table) {
  const ridge = t.ridge.map((c, pos) => cardEl(c === null ? "back" : c,
    { extra: (pos === t.coin ? "coin" : "") + (pos === t.camp ? " camp" : "") }));
  const ridgeRow = row("your end", ridge);
  ridgeRow.classList.add("ridge");
  ridgeRow.append(Object.assign(document.createElement("span"), { className: "label", textContent: "partner's end" }));
  table.append(ridgeRow);
  table.append(facts([["deal", t.deal + (t.last_deal ? " (the last)" : "")], ["trick", `${t.trick}/13`],
    ["trumps", t.trumps || (t.trumps_rule ? "none yet" : "none (Expert)")], ["ropes left", t.ropes]]));
  const partner = t.partner_hand ? t.partner_hand.map((c) => cardEl(c, { small: true }))
    : Array.from({ length: t.partner_cards }, () => cardEl("back", { small: true }));
  table.append(row("partner's hand", partner));
  tricksAndHand(t, table);
}

function rook(t, table) {
  const phase = { bid: "bidding", trump: "naming trumps", discard: "discarding 3 cards", play: "playing tricks",
    draw: "drawing", over: "over" }[t.phase];
  const contract = t.bidder ? `${t.high_bid} by ${t.bidder}` : t.high_bid ? `high bid ${t.high_bid}` : "no bid yet";
  table.append(facts([["phase", phase], ["totals", `you ${t.totals[0]}, opponent ${t.totals[1]} (to ${t.target_score})`],
    ["contract", contract], ["trumps", t.trumps || "not named"]]));
  table.append(facts([["your bids", t.bids_self.join(", ") + (t.passed_self ? " pass" : "") || "-"],
    ["opponent's bids", t.bids_opp.join(", ") + (t.passed_opp ? " pass" : "") || "-"],
    ["tricks", `you ${t.tricks[0]} (${t.points[0]} pts), opponent ${t.tricks[1]} (${t.points[1]} pts)`]]));
  table.append(row("draw pile", t.face_up ? [cardEl("back", { small: true }), cardEl(t.face_up)] : [cardEl(null)]));
  if (t.opp_known.length) table.append(row("opponent holds", t.opp_known.map((c) => cardEl(c, { small: true }))));
  if (t.nest.length) table.append(row("the Nest you took", t.nest.map((c) => cardEl(c, { small: true }))));
  if (t.discards.length) table.append(row("your discards", t.discards.map((c) => cardEl(c, { small: true }))));
  tricksAndHand(t, table);
  moveButtons(["bid", "pass", "trumps", "draw"]);
}

// Horizontal places of the 28 peak positions, in bottom-card widths (the middle of the two cards covering each).
const COLUMNS = (() => {
  const x = new Array(28).fill(0);
  for (let k = 0; k < 10; k++) x[18 + k] = k;
  for (let k = 0; k < 9; k++) x[9 + k] = k + 0.5;
  for (let j = 0; j < 6; j++) { const k = j + Math.floor(j / 2); x[3 + j] = (x[9 + k] + x[10 + k]) / 2; }
  for (let i = 0; i < 3; i++) x[i] = (x[3 + 2 * i] + x[4 + 2 * i]) / 2;
  return x;
})();
const ROW_OF = (pos) => (pos < 3 ? 0 : pos < 9 ? 1 : pos < 18 ? 2 : 3);

function summitRush(t, table) {
  const mine = {};  // the move a click on a peak card makes: onto your pile if it fits there, else the first
  for (const m of view.legal) {
    if (m.kind !== "card") continue;
    if (!mine[m.code] || m.label.endsWith("your pile")) mine[m.code] = m;
  }
  const peaks = document.createElement("div");
  peaks.id = "peaks";
  t.peaks.forEach((c, pos) => {
    const face = c && c !== "back";
    const el = cardEl(c, { legal: face ? mine[c] : null, dim: face && !view.over });
    el.style.left = `${COLUMNS[pos] * 52}px`;
    el.style.top = `${ROW_OF(pos) * 38}px`;
    el.dataset.pos = pos;
    peaks.append(el);
  });
  table.append(peaks);
  const piles = document.createElement("div");
  piles.className = "piles";
  for (const p of t.piles) {
    const div = document.createElement("div");
    div.className = "pile";
    div.append(`${p.owner === "you" ? "your" : p.owner + "'s"} pile`, document.createElement("br"), cardEl(p.top),
      document.createElement("br"), `stock: ${p.stock_left}`);
    piles.append(div);
  }
  table.append(piles);
  if (t.heard) {
    const ago = (n) => (n === 0 ? "just now" : n === 1 ? "1 move ago" : `${n} moves ago`);
    const said = t.heard.filter((h) => h).map((h) => `${h.who}: “${h.message}” (${ago(h.ago)})`);
    table.append(facts([["last said", said.join("; ") || "nothing yet"]]));
  }
  moveButtons(["card", "turn", "wait"]);
  const talk = $("talk");
  talk.hidden = !t.messages;
  if (t.messages && $("message").options.length !== t.messages.length + 1) {
    $("message").replaceChildren(new Option("(nothing)", 0), ...t.messages.map((m) => new Option(m.label, m.action)));
  }
  const q = view.queued;
  const saying = q && q.message ? t.messages.find((m) => m.action === q.message).label : null;
  $("queued").textContent = q ? `next move: ${q.label}` + (saying ? `, saying “${saying}”` : "") : "next move: wait";
}

// ---------------------------------------------------------------- drawing a view
// The games drawn as tables, by env id; any other is shown in words (``inWords``).
const DRAWINGS = { rope_team_v0: ropeTeam, rook_v0: rook, summit_rush_v0: summitRush };

function render(v) {
  // A move's reply and the events socket race: a reply computed before a clock tick can arrive after the tick's
  // push (the game's last one, say). A view of this game older than the one shown is dropped, or the page would
  // go back to a table that has moved on, and never see the end.
  if (view && v.id === view.id && v.steps < view.steps) return;
  view = v;
  $("setup").hidden = true;
  $("play").hidden = false;
  $("title").textContent = `${v.title} — ${v.variant}`;
  $("players").textContent = v.players.map((p) => `${p.seat}: ${p.player}`).join(" · ");
  const table = $("table");
  table.replaceChildren();
  $("moves").replaceChildren();
  (DRAWINGS[v.game] || inWords)(v.table, table);
  if (v.over) for (const el of document.querySelectorAll(".legal, .illegal")) el.classList.remove("legal", "illegal");
  $("leave").hidden = Boolean(v.over || v.broken);
  showRules(v.game);
  if (v.over) $("moves").replaceChildren();
  $("log").replaceChildren(...v.log.map((line) => Object.assign(document.createElement("li"), { textContent: line })));
  $("summary").hidden = !v.over;
  $("outcome").textContent = v.outcome || "";
  if (v.broken) $("error").textContent = v.broken;
  $("save-error").textContent = v.save_error || "";  // the server could not write the record: the person is told
  $("table").dataset.turn = v.your_turn ? "yours" : "waiting";
  $("table").dataset.steps = v.steps;
  const clock = v.clock;
  $("timer").hidden = !clock || !clock.running;
  if (clock) {
    deadline = clock.next_tick_in === null ? null : performance.now() + 1000 * clock.next_tick_in;
    const left = v.table.seconds_left === null ? "untimed" : `${Math.round(v.table.seconds_left)} s of game time left`;
    $("clock").textContent = `· ${left} · one move every ${clock.seconds_per_move} s`;
  } else {
    $("clock").textContent = v.over ? "" : v.your_turn ? "· your move" : "· waiting…";
  }
}

// The game's rules in short and its legend, from the catalog: its seat view's, the text the terminal prints for "?".
function showRules(env) {
  const game = Object.values(catalog).find((g) => g.env === env);
  $("rules-text").textContent = game ? game.rules : "";
}

function tickTimer() {
  if (view && view.clock && deadline !== null && view.clock.running) {
    const left = Math.max(0, deadline - performance.now()) / 1000;
    $("timer-fill").style.width = `${100 * (1 - left / view.clock.seconds_per_move)}%`;
  }
  requestAnimationFrame(tickTimer);
}

// ---------------------------------------------------------------- talking to the server
async function api(path, body) {
  const headers = token && path.startsWith("/api/games/") ? { "X-Cardzoo-Token": token } : {};
  const response = await fetch(path, body === undefined ? { headers } : {
    method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

async function send(action) {
  $("error").textContent = "";
  const body = { seat: view.seat, action };
  if (view.clock) body.message = Number($("message").value || 0);
  else body.step = view.steps;  // a turn-based move is for the table as shown
  try {
    render(await api(`/api/games/${view.id}/move`, body));
  } catch (err) {
    $("error").textContent = err.message;
  }
}

function hangUp() {
  const old = socket;
  socket = null;  // before closing: its close is ours, not one to come back from
  if (old) old.close();
}

// The server may close the socket (this page fell behind its events) or the network may drop it: the page comes
// back while the game is on (the server abandons a game no page has listened to for a while). Refusals (a wrong
// token 4403, an unknown game 4404, a flood 1008/1009) are final.
const FINAL_CLOSE = [1008, 1009, 4403, 4404];

function listen(id) {
  hangUp();
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const s = new WebSocket(`${scheme}://${location.host}/api/games/${id}/events?token=${encodeURIComponent(token)}`);
  socket = s;
  s.onmessage = (event) => {
    const v = JSON.parse(event.data);
    if (v.id === (view && view.id)) render(v);
  };
  s.onclose = (event) => {
    if (socket !== s || FINAL_CLOSE.includes(event.code)) return;
    setTimeout(() => {
      if (socket === s && view && view.id === id && !view.over && !view.broken) listen(id);
    }, 1000);
  };
}

async function start(promise) {
  try {
    const { token: given, ...v } = await promise;
    token = given;
    $("error").textContent = "";
    render(v);
    listen(v.id);
  } catch (err) {
    $("error").textContent = err.message;
    alert(err.message);
  }
}

// ---------------------------------------------------------------- the setup form
// The agents offered are those the server seats at the chosen game and variant (a learned policy plays only the
// levels it was trained on): every choice the form offers makes a game.
function fillAgents() {
  const game = catalog[$("game-choice").value];
  const chosen = $("agent").value;
  const agents = game.agents_by_variant[$("variant").value];
  $("agent").replaceChildren(...agents.map((a) => new Option(a, a, false, a === chosen)));
}

function fillSetup() {
  const game = catalog[$("game-choice").value];
  $("variant").replaceChildren(...game.variants.map((v) => new Option(v, v, v === game.default, v === game.default)));
  fillAgents();
  $("agent-role").textContent = game.cooperative ? "Partner" : "Opponent";
  $("pace-field").hidden = !game.paces;
  if (game.paces) {
    $("pace").replaceChildren(...Object.entries(game.paces).map(([value, label]) => new Option(label, value)));
    $("seconds").value = "";
    $("seconds").placeholder = "or seconds";
  }
}

$("setup-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const body = { game: $("game-choice").value, variant: $("variant").value, seat: $("seat").value,
    agents: [$("agent").value] };
  if (!$("pace-field").hidden) {
    if ($("seconds").value) body.seconds_per_move = Number($("seconds").value);
    else body.pace = $("pace").value;
  }
  start(api("/api/games", body));
});
$("again-same").addEventListener("click", () => start(api(`/api/games/${view.id}/again`, { deal: "same" })));
$("again-new").addEventListener("click", () => start(api(`/api/games/${view.id}/again`, { deal: "new" })));
// Back to the form: the page stops listening, and the server, with no page left on the game, saves it as
// abandoned after its grace period (play/liveness.py); a finished game is already saved.
function leave() {
  hangUp();
  view = null;
  token = null;
  $("error").textContent = "";
  $("play").hidden = true;
  $("setup").hidden = false;
}
$("change").addEventListener("click", leave);
$("leave").addEventListener("click", leave);

api("/api/catalog").then((c) => {
  catalog = c;
  $("game-choice").replaceChildren(...Object.entries(c).map(([name, g]) => new Option(g.title, name)));
  $("game-choice").addEventListener("change", fillSetup);
  $("variant").addEventListener("change", fillAgents);
  fillSetup();
});
requestAnimationFrame(tickTimer);
