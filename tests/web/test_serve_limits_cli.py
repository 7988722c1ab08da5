"""`serve`'s options of what clients may ask for: each in --help with its default, a bad value
one error line and exit code 2, the policy they make, and a real server keeping to it."""

from __future__ import annotations

import http.client
import json

import pytest
from extras import need

need("web")  # a test of caribsim.web: skips without the extra


from caribsim.__main__ import main
from caribsim.cli import serve
from caribsim.web.limits import KINDS, Policy, default_workers
from tests.web.conftest import free_socket, serve_process, wait_for

OPTIONS = {
    "--bots": "(default all: random,greedy,mcts,puct,gumbel,alphazero,az)",
    "--max-simulations": "(default 10000)",
    "--max-guided-simulations": "(default 1000)",
    "--max-seconds": "(default 5)",
    "--max-threads": "(default 1)",
    "--models-dir": "(default: the package's own only)",
    "--cuba-data": "(default none: the shipped data only)",
    "--max-games": "(default 100)",
    "--creates-per-minute": "(default 20)",
    "--workers": f"at most 4: {default_workers()} here)",
}


def _parse(argv):
    from caribsim.__main__ import build_parser

    return build_parser().parse_args(["serve", *argv])


def test_help_names_each_option_and_its_default(capsys):
    with pytest.raises(SystemExit) as e:
        main(["serve", "--help"])
    assert e.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "what clients may ask for:" in text
    for option, default in OPTIONS.items():
        assert option in text and default in text, option


def test_the_defaults_are_the_policys():
    assert serve.policy_of(_parse([])) == Policy()


def test_the_options_make_the_policy(tmp_path):
    models, data = tmp_path / "models", tmp_path / "data"
    models.mkdir()
    data.mkdir()
    args = _parse(
        [
            "--bots",
            "random,MCTS",
            "--max-simulations",
            "50",
            "--max-guided-simulations",
            "7",
            "--max-seconds",
            "0.5",
            "--max-threads",
            "2",
            "--models-dir",
            str(models),
            "--cuba-data",
            str(data),
            "--max-games",
            "3",
            "--creates-per-minute",
            "4",
            "--workers",
            "1",
        ]
    )
    assert serve.policy_of(args) == Policy(
        bots=("random", "mcts"),
        max_simulations=50,
        max_guided_simulations=7,
        max_seconds=0.5,
        max_threads=2,
        models_dirs=(str(models),),
        cuba_data_dirs=(str(data),),
        max_games=3,
        creates_per_minute=4,
        workers=1,
    )


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["--bots", "random,chess"],
            "argument --bots: bots must be a comma-separated list of "
            + ", ".join(KINDS)
            + ", got 'random,chess'",
        ),
        (["--bots", ","], "argument --bots: bots must be a comma-separated list"),
        (
            ["--max-simulations", "0"],
            "argument --max-simulations: max simulations must be an integer in 1..1099511627776, got 0",
        ),
        (
            ["--max-simulations", "2**40"],
            "max simulations must be an integer in 1..1099511627776, got '2**40'",
        ),
        (
            ["--max-guided-simulations", "x"],
            "argument --max-guided-simulations: max guided simulations must be an integer",
        ),
        (
            ["--max-seconds", "0"],
            "argument --max-seconds: seconds a move must be a number in 0.001..3600, got '0'",
        ),
        (["--max-seconds", "1e300"], "seconds a move must be a number in 0.001..3600, got '1e300'"),
        (["--max-seconds", "nan"], "seconds a move must be a number in 0.001..3600, got 'nan'"),
        (
            ["--max-threads", "0"],
            "argument --max-threads: max threads must be an integer in 1..256, got 0",
        ),
        (
            ["--models-dir", "/no/such/folder"],
            "argument --models-dir: --models-dir '/no/such/folder' is not a folder",
        ),
        (["--cuba-data", __file__], "argument --cuba-data: --cuba-data"),
        (
            ["--max-games", "-1"],
            "argument --max-games: max games must be an integer in 1..1000000, got -1",
        ),
        (
            ["--creates-per-minute", "1.5"],
            "argument --creates-per-minute: creates per minute must be an integer",
        ),
        (["--workers", "0"], "argument --workers: workers must be an integer in 1..256, got 0"),
    ],
)
def test_a_bad_value_is_one_error_line_and_exit_2(tmp_path, capsys, argv, words):
    with pytest.raises(SystemExit) as e:
        main(["serve", "--games-dir", str(tmp_path / "g"), *argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith("python -m caribsim serve: error: ") and words in err, err
    assert not (tmp_path / "g").exists()


def test_a_folder_with_a_colon_is_refused(tmp_path, capsys):
    odd = tmp_path / "a:b"
    odd.mkdir()
    with pytest.raises(SystemExit) as e:
        main(["serve", "--models-dir", str(odd)])
    assert e.value.code == 2 and "a folder's path may not hold ':'" in capsys.readouterr().err


def _post(port, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/api/games", json.dumps(body), {"content-type": "application/json"})
    r = conn.getresponse()
    return r.status, json.loads(r.read()), r.getheader("retry-after")


def test_a_server_keeps_to_its_options(tmp_path):
    with free_socket() as sock:
        port = sock.getsockname()[1]
    p = serve_process(
        port,
        str(tmp_path),
        "--bot-delay",
        "30",
        "--bots",
        "random,mcts",
        "--max-simulations",
        "300",
        "--creates-per-minute",
        "3",
        "--max-games",
        "2",
    )
    try:
        assert p.stdout.readline().startswith("caribsim: play at"), p.stderr.read()
        game = {"game": "puerto_rico", "seats": ["human", "mcts:300"]}
        status, made, _ = wait_for(lambda: _try(port, game), what="the server")
        assert status == 201, made
        status, answer, _ = _post(port, {**game, "seats": ["human", "greedy"]})
        assert (status, answer) == (
            400,
            {"error": "seat 1: greedy bots are not allowed on this server; allowed: random, mcts"},
        )
        status, answer, _ = _post(port, {**game, "seats": ["human", "mcts:301"]})
        assert (
            status == 400
            and "asks for iterations 301; this server allows at most 300" in answer["error"]
        )
        status, answer, retry = _post(port, game)
        assert status == 429 and int(retry) >= 1 and "at most 3 a minute" in answer["error"]
    finally:
        p.terminate()
        _, err = p.communicate(timeout=60)
    assert "Traceback" not in err


def _try(port, body):
    try:
        return _post(port, body)
    except OSError:
        return None
