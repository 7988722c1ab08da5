"""The self-play shard format, shared by its writer (``caribsim.scale.selfplay``) and the
trainers that read it (``caribsim.search.evaluators``): its name, its arrays and the reader."""

from __future__ import annotations

import json
import os
import zipfile
import zlib

import numpy as np

FORMAT = "caribsim-selfplay"
VERSION = 1
ARRAYS = {  # name: (dtype, shape; N = decisions in the shard, O = observation, A = actions, P = players)
    "observation": ("float32", "N, O"),
    "legal_mask": ("uint8", "N, A"),
    "policy": ("float32", "N, A"),
    "player": ("int8", "N"),
    "returns": ("float32", "N, P"),
    "value": ("float32", "N"),
    "game": ("int64", "N"),
    "move": ("int32", "N"),
}


def read(path, names=tuple(ARRAYS)) -> dict:
    """The arrays ``names`` of a finished self-play folder (every shard of its manifest,
    concatenated) or of one shard file, as {name: array}; a clear ValueError for anything
    that is not one."""
    path = os.fspath(path)
    if os.path.isdir(path):
        manifest_path = os.path.join(path, "manifest.json")
        try:
            with open(manifest_path, encoding="utf-8") as f:
                manifest = json.load(f)
        except OSError as e:
            raise ValueError(
                f"{path!r} is not a finished self-play folder: cannot read manifest.json "
                f"({e.strerror or e})"
            ) from None
        except ValueError as e:
            raise ValueError(f"{manifest_path!r} is not valid JSON: {e}") from None
        if (
            not isinstance(manifest, dict)
            or manifest.get("format") != FORMAT
            or not isinstance(manifest.get("shards"), list)
        ):
            raise ValueError(f"{manifest_path!r} is not a {FORMAT} manifest")
        files = []
        for shard in manifest["shards"]:
            if not isinstance(shard, dict) or not isinstance(shard.get("file"), str):
                raise ValueError(f"{manifest_path!r}: a shard entry has no file name")
            files.append(os.path.join(path, os.path.basename(shard["file"])))
    else:
        files = [path]
    parts = []
    for file in files:
        try:
            with np.load(file, allow_pickle=False) as z:
                parts.append({k: z[k] for k in names})
        except FileNotFoundError:
            raise ValueError(f"cannot read self-play shard {file!r}: no such file") from None
        except KeyError as e:
            raise ValueError(f"self-play shard {file!r} has no array {e}") from None
        except (
            OSError,
            ValueError,
            EOFError,
            zipfile.BadZipFile,
            zlib.error,
            AttributeError,
            TypeError,
        ) as e:
            raise ValueError(f"{file!r} is not a readable self-play shard (.npz): {e}") from None
    if not parts:
        raise ValueError(f"self-play folder {path!r} lists no shard")
    return {k: np.concatenate([p[k] for p in parts]) for k in names}
