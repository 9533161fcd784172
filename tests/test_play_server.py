"""The browser app's server (``cardzoo.play.server``) through Starlette's test client: whole games over the API,
what reaches the browser (the leak test: resampling the cards the seat cannot see leaves every JSON sent the same),
bad requests (a 4xx with a message, nothing changed), several games at once, Summit Rush's clock over the events
socket, and the games saved to the data folder replaying to the endings the page showed."""

from __future__ import annotations

import copy
import json
import re
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient

from cardzoo.envs.common.cards import STANDARD_CARDS, cards_of, mask_of
from cardzoo.play import records, server
from cardzoo.play.server import MoveIn, create_app
from cardzoo.play.table import Table, TickTable, TurnTable
from cardzoo.play.views import outcome_text

from .hidden_worlds import summit_rush_resample_hidden as summit_resample
from .test_rook_properties import resample_hidden as rook_resample


class PageClient(TestClient):
    """A client as the page that made the games: a request about a game carries the game's token (read from the
    server's games, so games made in the test through ``client.games`` have one too), unless the request names its
    own. The tokens' own tests are in test_play_access.py."""

    def _token(self, url) -> str | None:
        found = re.match(r"/api/games/([^/?]+)", str(url))
        live = found and self.games.games.get(found.group(1))
        return live.token if live else None

    def request(self, method, url, *, headers=None, **kwargs):
        headers = dict(headers or {})
        if (token := self._token(url)) and server.TOKEN_HEADER not in headers:
            headers[server.TOKEN_HEADER] = token
        return super().request(method, url, headers=headers, **kwargs)

    def websocket_connect(self, url, *args, **kwargs):
        if (token := self._token(url)) and "token=" not in url:
            url += f"?token={token}"
        if url.startswith("/"):  # the test client takes its base_url's host for requests, not for sockets
            url = "ws://127.0.0.1:8000" + url
        return super().websocket_connect(url, *args, **kwargs)


@pytest.fixture
def client(tmp_path):
    app = create_app(tmp_path / "data", seed=0)
    with PageClient(app, base_url="http://127.0.0.1:8000") as c:
        c.data = tmp_path / "data"
        c.games = app.state.games
        yield c


def new_game(client, **body) -> dict:
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def move(client, view: dict, action: int, **extra) -> dict:
    r = client.post(f"/api/games/{view['id']}/move", json={"seat": view["seat"], "action": action, **extra})
    assert r.status_code == 200, r.text
    return r.json()


def play_out(client, view: dict, rng: np.random.Generator) -> dict:
    """Play a turn-based game to its end with random legal moves, as clicks on the page would."""
    while not view["over"]:
        assert view["your_turn"] and view["legal"]
        view = move(client, view, view["legal"][rng.integers(len(view["legal"]))]["action"], step=view["steps"])
    return view


def saved_games(folder) -> list[dict]:
    return [entry for _, entry in records.read(folder / records.GAMES_FILE)]


@pytest.mark.parametrize("game, variant, seat", [("rope_team", "hard", "player_0"), ("rope_team", "normal, open hands",
                                                 "player_1"), ("rook", "one round", "player_1")])
def test_a_whole_game_over_the_api_is_saved_and_replays_to_the_page_outcome(client, game, variant, seat):
    view = new_game(client, game=game, variant=variant, seat=seat, agents=["learned"])
    assert view["seat"] == seat and view["variant"] == variant and not view["over"]
    view = play_out(client, view, np.random.default_rng(1))
    [entry] = saved_games(client.data)
    assert entry["where"] == "browser" and entry["finished"] and entry["variant"] == variant
    other = "player_1" if seat == "player_0" else "player_0"
    assert entry["seats"][seat] == {"player": "human"}
    assert entry["seats"][other]["agent"] == "learned" and len(entry["seats"][other]["policy"]) >= 12
    env = records.replay_entry(entry, "saved game")
    assert outcome_text(entry["record"]["env"], records.final_info(env), int(seat[-1])) == view["outcome"]
    r = client.post(f"/api/games/{view['id']}/move", json={"seat": seat, "action": 0})
    assert r.status_code == 409 and "the game is over" in r.json()["error"]


def test_play_again_on_the_same_deal_and_on_a_new_deal(client):
    first = new_game(client, game="rope_team", variant="easy", agents=["simple"])
    play_out(client, first, np.random.default_rng(0))  # the same deal only once it is over (test_play_access.py)
    same = client.post(f"/api/games/{first['id']}/again", json={"deal": "same"}).json()
    new = client.post(f"/api/games/{first['id']}/again", json={"deal": "new"}).json()
    assert same["id"] != first["id"] and same["table"] == first["table"] and same["legal"] == first["legal"]
    assert new["table"]["hand"] != first["table"]["hand"]
    assert len({first["id"], same["id"], new["id"]}) == 3 and same["variant"] == new["variant"] == "easy"


# ---------------------------------------------------------------------------- the leak test
def rope_team_resample(s, viewer: int, rng: np.random.Generator):
    """A copy of ``s`` with the cards ``viewer`` cannot see (the partner's hand, face-down ridge cards, the cards
    aside) shuffled among those places."""
    t = s.copy()
    partner = 1 - viewer
    down = [pos for pos in range(9) if not s.up[pos]]
    pool = cards_of(s.hands[partner]) + [s.ridge[pos] for pos in down] + cards_of(s.aside)
    pool = [pool[i] for i in rng.permutation(len(pool))]
    k = s.hands[partner].bit_count()
    t.hands[partner] = mask_of(pool[:k])
    for pos, card in zip(down, pool[k:k + len(down)], strict=True):
        t.ridge[pos] = card
    t.aside = mask_of(pool[k + len(down):])
    return t


RESAMPLE = {
    "rope_team": lambda s, seat, rng: rope_team_resample(s, seat, rng),
    "rook": lambda s, seat, rng: rook_resample(s, seat, rng),
    "summit_rush": lambda s, seat, rng: summit_resample(s, rng),
}


def sent(live) -> str:
    """The JSON the server sends for a game (every response and push is ``live.view()``)."""
    return json.dumps(live.view(), sort_keys=True)


def seen_after(live, change) -> str:
    """What the server would send if the game's state were ``change(state)``: a copy of the game whose state is
    replaced and whose person's seat observes it afresh (as after a move)."""
    twin = copy.deepcopy(live)
    env = twin.table.env.unwrapped
    env.game = change(env.game)
    if isinstance(twin.table, TickTable):
        twin.table.obs = env._observations()
    twin.table.views[twin.seat].observe(**twin.table._observe(twin.seat))
    return sent(twin)


def hidden_changed(before, after) -> bool:
    return any(getattr(before, name) != getattr(after, name) for name in ("hands", "ridge", "peaks", "stocks", "pile")
               if hasattr(before, name))


def check_no_leak(client, live, resample, rng: np.random.Generator) -> int:
    """Play ``live`` to its end; before every move, resample the hidden cards and check that nothing the server
    sends changes: neither a fresh observation of the resampled state nor a GET while the state is swapped.
    Returns how often the resampling really moved hidden cards."""
    changed = 0
    while not live.table.over:
        as_is = seen_after(live, lambda s: s)
        before = client.get(f"/api/games/{live.id}").json()
        assert "seed" not in json.dumps(before)  # the seed would give the deal away
        for _ in range(2):
            state = live.table.env.unwrapped.game
            other = resample(state, live.seat, rng)
            changed += hidden_changed(state, other)
            assert seen_after(live, lambda s, other=other: other) == as_is, "the view depends on a hidden card"
            live.table.env.unwrapped.game = other
            try:
                assert client.get(f"/api/games/{live.id}").json() == before, "a response depends on a hidden card"
            finally:
                live.table.env.unwrapped.game = state
        legal = live.view()["legal"]
        live.move(MoveIn(seat=live.view()["seat"], action=legal[rng.integers(len(legal))]["action"]))
        if isinstance(live.table, TickTable):
            live.tick()
    return changed


@pytest.mark.parametrize("game, variant, seat", [("rope_team", "normal", "player_0"), ("rope_team", "expert",
                                                 "player_1"), ("rook", "one round", "player_0"),
                                                 ("summit_rush", "normal", "player_1")])
def test_only_what_the_seat_may_see_reaches_the_browser(client, game, variant, seat):
    view = new_game(client, game=game, variant=variant, seat=seat, agents=["simple" if game != "rook" else
                                                                            "heuristic"])
    live = client.games.get(view["id"])
    changed = check_no_leak(client, live, RESAMPLE[game], np.random.default_rng(7))
    assert changed > 5  # the resampling moved hidden cards, so the equalities meant something


def test_the_leak_test_catches_a_view_of_the_partners_seat(client, monkeypatch):
    """Planted bug: the table feeds the person's view with the other seat's observation (its hand)."""
    monkeypatch.setattr(TurnTable, "_observe", _other_seat)
    view = new_game(client, game="rope_team", variant="normal", agents=["simple"])
    with pytest.raises(AssertionError, match="the view depends on a hidden card"):
        check_no_leak(client, client.games.get(view["id"]), RESAMPLE["rope_team"], np.random.default_rng(0))


def _other_seat(table, seat):
    obs = table.env.observe(table.seats[1 - seat])
    return {"observation": obs["observation"], "mask": table.env.observe(table.seats[seat])["action_mask"]}


def test_the_leak_test_catches_a_response_built_from_the_state(client, monkeypatch):
    """Planted bug: the server adds the partner's hand, read from the game state, to what it sends."""
    view_of = server.LiveGame.view

    def leaky(self):
        return {**view_of(self), "partner": cards_of(self.table.env.unwrapped.game.hands[1 - self.seat])}

    monkeypatch.setattr(server.LiveGame, "view", leaky)
    view = new_game(client, game="rope_team", variant="normal", agents=["simple"])
    with pytest.raises(AssertionError):
        check_no_leak(client, client.games.get(view["id"]), RESAMPLE["rope_team"], np.random.default_rng(0))


def test_open_hands_show_the_partners_hand_so_resampling_it_shows(client):
    """The leak check's own sanity: in the open-hands variant the partner's hand is on the table, so resampling it
    must change what is sent."""
    view = new_game(client, game="rope_team", variant="normal, open hands", agents=["simple"])
    live = client.games.get(view["id"])
    other = rope_team_resample(live.table.env.unwrapped.game, live.seat, np.random.default_rng(0))
    assert view["table"]["partner_hand"] and seen_after(live, lambda s: other) != seen_after(live, lambda s: s)


# ---------------------------------------------------------------------------- bad requests
def rope_team_following(client) -> dict:
    """A Rope Team game where the person (player_1) must follow the partner's lead and holds another suit too."""
    for seed in range(50):
        live = client.games.create(client.games.check(server.NewGame(game="rope_team", seat="player_1",
                                                                     agents=["simple"])), seed=seed)
        view = live.view()
        hand, led = view["table"]["hand"], view["table"]["led"]["card"]
        if any(c[1] == led[1] for c in hand) and any(c[1] != led[1] for c in hand):
            return view
    raise AssertionError("no deal found")


BAD_MOVES = [
    # body (None: keep the view's), status, message
    ({"action": "OFF_SUIT"}, 400, "not now: you must follow"),
    ({"action": "NOT_IN_HAND"}, 400, "not now: that card is not in your hand"),
    ({"action": 99}, 400, "out of range 0..51"),
    ({"action": -1}, 400, "out of range 0..51"),
    ({"seat": "player_0"}, 403, "player_0 is played by the agent 'simple'; you sit at player_1"),
    ({"seat": "player_7"}, 400, "no seat 'player_7' at this table"),
    ({"step": 5}, 409, "stale view: it shows move 5, the table is at move 1"),
    ({"message": 3}, 400, "only Summit Rush's talking games take a message"),
    ({"action": "QS"}, 422, "malformed request: action: Input should be a valid integer"),
    ({"action": 1.0}, 422, "malformed request: action: Input should be a valid integer"),
    ({"card": "QS"}, 422, "malformed request: card: Extra inputs are not permitted"),
    ({"seat": None}, 422, "malformed request: seat: Input should be a valid string"),
]


@pytest.mark.parametrize("change, status, message", BAD_MOVES, ids=[json.dumps(c) for c, _, _ in BAD_MOVES])
def test_a_bad_move_is_a_4xx_with_a_message_and_changes_nothing(client, change, status, message):
    view = rope_team_following(client)
    live = client.games.get(view["id"])
    hand, led = view["table"]["hand"], view["table"]["led"]["card"]
    named = {"OFF_SUIT": next(c for c in hand if c[1] != led[1]),
             "NOT_IN_HAND": next(c for c in ("2C", "3D", "4H", "5S", "6C", "7D") if c not in hand and c != led)}
    body = {"seat": view["seat"], "action": view["legal"][0]["action"], "step": view["steps"], **change}
    if body["action"] in named:
        body["action"] = STANDARD_CARDS[named[body["action"]]]
    before, record = sent(live), live.table.env.unwrapped.game_record()
    r = client.post(f"/api/games/{view['id']}/move", json=body)
    assert r.status_code == status and message in r.json()["error"], r.text
    assert sent(live) == before and live.table.env.unwrapped.game_record() == record
    assert move(client, view, view["legal"][0]["action"], step=view["steps"])["steps"] > view["steps"]  # still usable


@pytest.mark.parametrize("path, content, status, message", [
    ("/api/games/{id}/move", b'{"seat": "player_1", "action": ', 422, "JSON decode error"),
    ("/api/games/{id}/move", b"[1, 2]", 422, "malformed request"),
    ("/api/games/nope/move", b'{"seat": "player_1", "action": 1}', 404, "no game 'nope' here"),
    ("/api/games/nope", None, 404, "no game 'nope' here"),
    ("/api/games/{id}/again", b'{"deal": "old"}', 422, "deal: Input should be 'same' or 'new'"),
    ("/api/games", b'{"game": "poker"}', 400, "unknown game 'poker'; games: rope_team, rook, summit_rush"),
    ("/api/games", b'{"game": "rook", "variant": "hard"}', 400, "unknown variant 'hard' of rook; variants: one round"),
    ("/api/games", b'{"game": "rook", "agents": ["simple"]}', 400, "no agent 'simple' for rook; agents: learned"),
    ("/api/games", b'{"game": "rook", "seat": "player_2"}', 400, "no seat 'player_2'"),
    ("/api/games", b'{"game": "rook", "seconds_per_move": 1}', 400, "rook is turn-based: a pace is only for Summit"),
    ("/api/games", b'{"game": "summit_rush", "seconds_per_move": 0.01}', 422, "greater than or equal to 0.05"),
    ("/api/games", b'{"game": "summit_rush", "pace": "practice", "seconds_per_move": 1}', 400, "not both"),
])
def test_bad_requests_are_4xx_with_a_message(client, path, content, status, message):
    view = rope_team_following(client)
    live = client.games.get(view["id"])
    before, games = sent(live), set(client.games.games)
    url = path.format(id=view["id"])
    r = client.get(url) if content is None else client.post(url, content=content,
                                                            headers={"Content-Type": "application/json"})
    assert r.status_code == status and message in r.json()["error"], r.text
    assert sent(live) == before and set(client.games.games) == games  # nothing changed, no game made


def test_summit_rush_bad_moves(client):
    view = new_game(client, game="summit_rush", seat="player_0", seconds_per_move=30)
    live = client.games.get(view["id"])
    down = view["table"]["peaks"].index("back")  # a face-down card: never legal
    n_moves = live.table.env.n_moves
    for body, status, message in [
        ({"action": down * 2}, 400, f"position {down} is face down"),
        ({"action": n_moves}, 400, f"move {n_moves} is out of range 0..{n_moves - 1}"),
        ({"action": n_moves - 1, "message": 57}, 400, "message 57 is not one of 0..56"),
        ({"action": n_moves - 1, "seat": "player_1"}, 403, "player_1 is played by the agent 'learned'"),
    ]:
        r = client.post(f"/api/games/{view['id']}/move", json={"seat": "player_0", **body})
        assert r.status_code == status and message in r.json()["error"], r.text
        assert live.queued == {} and live.table.steps == 0
    silent = new_game(client, game="summit_rush", variant="normal, silent", seconds_per_move=30)
    r = client.post(f"/api/games/{silent['id']}/move", json={"seat": "player_0", "action": 1, "message": 1})
    assert r.status_code == 400 and "this game is silent" in r.json()["error"]


# ---------------------------------------------------------------------------- several games at once
def test_interleaved_games_do_not_mix(client):
    """Three games moved in turn, one move each: each ends exactly as the same game played alone."""
    views = [new_game(client, game="rope_team", variant="hard", seat="player_0", agents=["learned"]),
             new_game(client, game="rook", variant="one round", seat="player_1", agents=["heuristic"]),
             new_game(client, game="rope_team", variant="hard", seat="player_1", agents=["simple"])]
    lives = [client.games.get(v["id"]) for v in views]
    while not all(v["over"] for v in views):
        for i, v in enumerate(views):
            if v["over"]:
                continue
            others = [sent(live) for j, live in enumerate(lives) if j != i]
            views[i] = move(client, v, v["legal"][0]["action"], step=v["steps"])
            assert views[i]["id"] == v["id"] and views[i]["steps"] > v["steps"]
            assert [sent(live) for j, live in enumerate(lives) if j != i] == others  # the others did not move
    for live, view in zip(lives, views, strict=True):
        alone = Table.open(live.table.game, live.table.options, live.table.players, live.seed)
        while not alone.over:
            alone.advance()
            if not alone.over:
                alone.play(live.seat, alone.views[live.seat].legal[0].action)
        assert alone.env.unwrapped.game_record() == live.table.env.unwrapped.game_record()
        assert alone.outcome(live.seat) == view["outcome"]
    assert len(saved_games(client.data)) == 3


# ---------------------------------------------------------------------------- Summit Rush's clock
def test_summit_rush_runs_on_the_servers_clock_and_pushes_every_tick(client):
    view = new_game(client, game="summit_rush", seat="player_1", seconds_per_move=0.05)
    assert view["clock"] == {"seconds_per_move": 0.05, "running": False, "next_tick_in": None}
    time.sleep(0.3)
    assert client.get(f"/api/games/{view['id']}").json()["steps"] == 0  # the clock waits for the page
    n_moves = client.games.get(view["id"]).table.env.n_moves
    sent_moves, ticks = set(), []
    with client.websocket_connect(f"/api/games/{view['id']}/events") as ws:
        while True:
            pushed = ws.receive_json()
            ticks.append(pushed["steps"])
            if pushed["over"]:
                break
            cards = [m for m in pushed["legal"] if m["kind"] == "card"]
            if cards and pushed["steps"] % 2:  # a click on every other tick, saying "I need a 2" (message 3)
                r = client.post(f"/api/games/{view['id']}/move",
                                json={"seat": "player_1", "action": cards[0]["action"], "message": 3})
                if r.status_code == 200:  # else the tick came first and the card moved: a 400, nothing queued
                    sent_moves.add(3 * n_moves + cards[0]["action"])
                    assert r.json()["queued"] == {"action": cards[0]["action"], "label": cards[0]["label"],
                                                  "message": 3}
    assert ticks == sorted(ticks) and ticks[-1] == pushed["steps"] > 5
    [entry] = saved_games(client.data)
    assert entry["seconds_per_move"] == 0.05 and entry["finished"]
    env = records.replay_entry(entry, "saved game")
    assert outcome_text("summit_rush_v0", records.final_info(env), 1) == pushed["outcome"]
    mine = [tick["player_1"] for tick in entry["record"]["actions"]]
    wait = n_moves - 1
    assert {a for a in mine if a != wait} <= sent_moves and set(mine) & sent_moves  # the clicks and waits only


def test_an_unfinished_game_is_saved_when_the_server_stops(tmp_path):
    app = create_app(tmp_path, seed=3)
    with PageClient(app, base_url="http://127.0.0.1:8000") as c:
        c.games = app.state.games
        view = new_game(c, game="rook", variant="game to 500", agents=["random"])
        view = move(c, view, view["legal"][0]["action"])
        new_game(c, game="rope_team")  # not moved: nothing to save
    [entry] = saved_games(tmp_path)
    assert not entry["finished"] and entry["info"] is None and entry["results"] is None
    env = records.replay_entry(entry, "unfinished game")
    assert records.final_info(env) is None and len(entry["record"]["actions"]) >= 1


def test_a_tick_that_raises_stops_the_clock_says_why_and_saves_the_game(client, monkeypatch, caplog):
    view = new_game(client, game="summit_rush", seat="player_0", seconds_per_move=0.05)
    table = client.games.get(view["id"]).table
    real_tick = table.tick

    def tick(moves):  # a bug planted in the third tick
        if table.steps == 2:
            raise RuntimeError("planted")
        real_tick(moves)

    monkeypatch.setattr(table, "tick", tick)
    with client.websocket_connect(f"/api/games/{view['id']}/events") as ws:
        pushed = ws.receive_json()
        while "broken" not in pushed:
            assert not pushed["over"]
            pushed = ws.receive_json()
    # The page gets a generic message; the exception's text (a path, a repr) stays in the log with its traceback.
    assert pushed["steps"] == 2 and pushed["broken"] == server.SERVER_ERROR and "planted" not in json.dumps(pushed)
    assert "RuntimeError: planted" in caplog.text and "Traceback" in caplog.text
    assert pushed["clock"]["running"] is False and not pushed["over"]
    assert "game " + view["id"] + ": the clock stopped at tick 2" in caplog.text
    r = client.post(f"/api/games/{view['id']}/move", json={"seat": "player_0", "action": pushed["legal"][0]["action"]})
    assert r.status_code == 409 and "server error" in r.json()["error"]
    with client.websocket_connect(f"/api/games/{view['id']}/events") as ws:  # a page coming back: no new clock
        assert ws.receive_json()["broken"] == pushed["broken"]
    time.sleep(0.2)
    assert table.steps == 2
    [entry] = saved_games(client.data)
    assert not entry["finished"] and len(entry["record"]["actions"]) == 2
