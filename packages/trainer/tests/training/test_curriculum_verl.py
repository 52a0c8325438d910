"""The curriculum inside veRL: the dataset class (data.custom_cls) composed by
`curriculum=tiers`, its state in the StatefulDataLoader state veRL saves as data.pt, and a
resume from that state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from omegaconf import DictConfig, OmegaConf

from codefu_trainer.training.verl.config import compose_verl
from codefu_trainer.training.verl.curriculum import (
    PROBLEM_FIELD,
    CurriculumDataset,
    active_curriculum,
)

from ..conftest import CONF, _problem

BASE = ["trainer.nnodes=1", "trainer.n_gpus_per_node=8"]
TIER_SIZES = {"easy": 5, "hard": 4, "expert": 3}


@pytest.fixture
def tiers(tmp_path: Path) -> Path:
    """Prepared tiers (codefu-data's layout) of a+b problems with distinct names."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "processed"
    for t, (tier, n) in enumerate(TIER_SIZES.items()):
        (out / tier).mkdir(parents=True)
        for split in ("train", "test"):
            rows = [_problem(100 * t + i, split) for i in range(n)]
            pq.write_table(pa.Table.from_pylist(rows), out / tier / f"{split}.parquet")
    return out


def _data_config(tiers: Path, *overrides: str) -> DictConfig:
    files = [
        f"data.train_files=['{tiers / 'easy' / 'train.parquet'}']",
        f"data.val_files=['{tiers / 'easy' / 'test.parquet'}']",
    ]
    config = compose_verl(CONF, [*BASE, "curriculum=tiers", *files, *overrides])
    return config.data


def _dataset(data: DictConfig, files: Any = None) -> CurriculumDataset:
    from codefu_trainer.training.rehearsal.tiny_model import build_byte_tokenizer

    return CurriculumDataset(
        data_files=list(files or data.train_files),
        tokenizer=build_byte_tokenizer(),
        config=data,
        processor=None,
    )


def _loader(dataset: CurriculumDataset, data: DictConfig, batch_size: int) -> Any:
    """veRL's training dataloader as V1's _init_dataloader builds it."""
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.trainer.ppo.utils import create_rl_sampler
    from verl.utils.dataset.rl_dataset import collate_fn

    return StatefulDataLoader(
        dataset=dataset,
        batch_size=batch_size,
        num_workers=0,
        drop_last=True,
        collate_fn=collate_fn,
        sampler=create_rl_sampler(data, dataset),
    )


def test_curriculum_tiers_composes_both_extension_points() -> None:
    config = compose_verl(CONF, [*BASE, "curriculum=tiers", "recipe=dapo"])
    assert config.data.custom_cls.name == "CurriculumDataset"
    assert config.data.dataloader_num_workers == 0
    sampler = config.trainer.v1.sampler
    assert sampler.custom_sampler.name == "CurriculumReplayBuffer"
    kwargs = OmegaConf.to_container(sampler.sampler_kwargs, resolve=True)
    assert kwargs == {
        "filter_groups_enable": True,
        "filter_groups_metric": "score",
        "max_inflight_gen_batches": 3,
        "train_batch_size": 64,
        "score_key": "score",
    }
    from verl.utils.dataset.rl_dataset import get_dataset_class
    from verl.utils.import_utils import load_extern_object

    assert get_dataset_class(config.data) is CurriculumDataset
    custom = sampler.custom_sampler
    assert load_extern_object(custom.path, custom.name).__name__ == "CurriculumReplayBuffer"
    # Without curriculum=tiers, veRL's own dataset and replay buffer.
    plain = compose_verl(CONF, BASE)
    assert (
        plain.data.custom_cls.path is None and plain.trainer.v1.sampler.custom_sampler.path is None
    )


def test_items_are_drawn_by_the_curriculum_and_carry_their_problem(tiers: Path) -> None:
    data = _data_config(tiers, "data.filter_overlong_prompts=false")
    dataset = _dataset(data)
    assert active_curriculum() is dataset.curriculum
    assert len(dataset) == sum(TIER_SIZES.values())
    items = [dataset[0] for _ in range(12)]  # the index does not decide the problem
    problems = {item["extra_info"][PROBLEM_FIELD] for item in items}
    assert len(problems) > 1 and all(p.startswith("easy/") for p in problems)
    for item in items:
        name = item["extra_info"][PROBLEM_FIELD].split("/", 1)[1]
        assert name in item["raw_prompt"][0]["content"]  # the prompt is that problem's
    # Validation files: veRL's dataset unchanged, in file order, no curriculum key.
    val = _dataset(data, files=data.val_files)
    assert val.curriculum is None and len(val) == TIER_SIZES["easy"]
    assert PROBLEM_FIELD not in val[0]["extra_info"]


def test_promotion_moves_the_draws_to_the_next_tier(tiers: Path) -> None:
    data = _data_config(tiers, "data.filter_overlong_prompts=false", "data.curriculum.min_steps=1")
    dataset = _dataset(data)
    assert dataset.curriculum is not None
    drawn = [dataset[0]["extra_info"][PROBLEM_FIELD] for _ in range(4)]
    report = dataset.curriculum.observe({key: [1.0] * 8 for key in drawn})
    assert report.promoted_to == "hard"
    assert 0 < report.sampled_difficulty <= 1
    assert all(dataset[0]["extra_info"][PROBLEM_FIELD].startswith("hard/") for _ in range(8))


def test_workers_and_missing_tiers_are_refused_with_the_fix(tiers: Path) -> None:
    with pytest.raises(ValueError, match="dataloader_num_workers=0"):
        _dataset(_data_config(tiers, "data.dataloader_num_workers=2"))
    (tiers / "expert" / "train.parquet").unlink()
    with pytest.raises(FileNotFoundError, match="nox -s prepare"):
        _dataset(_data_config(tiers))


def _run(loader: Any, dataset: CurriculumDataset, steps: int, its: list[Any]) -> list[list[str]]:
    """`steps` batches as veRL's trainer fetches them (a new epoch on StopIteration); after
    each, every drawn problem scored: it passes iff the number in its name is even."""
    assert dataset.curriculum is not None
    out = []
    for _ in range(steps):
        try:
            batch = next(its[0])
        except StopIteration:
            its[0] = iter(loader)
            batch = next(its[0])
        keys = [info[PROBLEM_FIELD] for info in batch["extra_info"]]
        out.append(keys)
        scores = {k: [float(int(k.split("/")[1].split("_")[0]) % 2 == 0)] * 4 for k in keys}
        dataset.curriculum.observe(scores)
    return out


def test_kill_and_resume_from_the_dataloader_state_veRL_saves(tiers: Path, tmp_path: Path) -> None:
    import torch

    overrides = ("data.filter_overlong_prompts=false", "data.curriculum.min_steps=2")
    data = _data_config(tiers, *overrides)
    whole_ds = _dataset(data)
    whole = _loader(whole_ds, data, 3)
    expected = _run(whole, whole_ds, 10, [iter(whole)])

    first_ds = _dataset(data)
    first = _loader(first_ds, data, 3)
    got = _run(first, first_ds, 6, [iter(first)])  # into the second epoch
    torch.save(first.state_dict(), tmp_path / "data.pt")  # veRL's _save_checkpoint
    del first, first_ds

    resumed_ds = _dataset(data)
    resumed = _loader(resumed_ds, data, 3)
    # veRL's _load_checkpoint, then its fetch: iter(train_dataloader)
    resumed.load_state_dict(torch.load(tmp_path / "data.pt", weights_only=False))
    its = [iter(resumed)]  # torchdata restores the dataset's state here
    assert resumed_ds.curriculum is not None and whole_ds.curriculum is not None
    assert resumed_ds.curriculum.state.step == 6
    got += _run(resumed, resumed_ds, 4, its)
    assert got == expected
    assert resumed_ds.curriculum.state.to_dict() == whole_ds.curriculum.state.to_dict()
    assert whole_ds.curriculum.state.promotions  # the run went somewhere


def test_cpu_verl_writes_every_tier_of_the_curriculum(tmp_path: Path) -> None:
    """`cluster=cpu_verl curriculum=tiers`: the run's data holds each tier's problems where
    the curriculum's dataset reads them, short-program problems first (memorised by the
    warm start), the rest of the tier after them."""
    import pyarrow.parquet as pq

    from codefu_data.config import DataConfig
    from codefu_data.prepare import prepare
    from codefu_trainer.run.config import ModelKind
    from codefu_trainer.run.prompt_rows import load_prompts
    from codefu_trainer.training.clusters.registry import compose_run as compose
    from codefu_trainer.training.rehearsal.base_model import select_problems
    from codefu_trainer.training.verl.cpu.config import prepare_inputs
    from codefu_trainer.training.verl.curriculum import tier_files

    data = prepare(DataConfig(source="sample", out_dir=str(tmp_path / "data")), progress=False)
    run_dir = tmp_path / "run"
    run = compose(
        CONF,
        ["cluster=cpu_verl", "curriculum=tiers", f"data.out_dir={data.out_dir}",
         f"run.dir={run_dir}"],
    )  # fmt: skip
    assert run.verl is not None
    run.cfg.model.kind = ModelKind.hf  # the tiny model's warm start is tested elsewhere
    tiers = list(run.verl.data.curriculum.tiers)
    prepare_inputs(run.cfg, run_dir, tiers)
    files = tier_files(run.verl.data.train_files[0], tiers)
    assert files == {t: run_dir / "data" / t / "train.parquet" for t in tiers}
    r = run.cfg.rehearsal
    for tier, path in files.items():
        rows = pq.read_table(path).to_pylist()
        assert len(rows) == r.problems
        prepared = load_prompts(Path(data.out_dir) / tier / "train.parquet", r.max_prompt_tokens)
        memorised, _ = select_problems(prepared, "sample", r, require_all=False)
        names = [row["extra_info"]["name"] for row in rows]
        # the tier's memorisable problems first, then the tier's first others, in order
        others = [p["name"] for p in prepared if p["name"] not in {m["name"] for m in memorised}]
        assert names == ([m["name"] for m in memorised] + others)[: r.problems]
        assert all(len(row["prompt"][-1]["content"]) <= r.max_prompt_tokens for row in rows)
    # The shipped sample: every easy problem has short programs, 1 hard one, no expert one.
    counts = {
        tier: len(
            select_problems(
                load_prompts(Path(data.out_dir) / tier / "train.parquet", r.max_prompt_tokens),
                "sample",
                r,
                require_all=False,
            )[0]
        )
        for tier in tiers
    }
    assert counts == {"easy": 3, "hard": 1, "expert": 0}
    dataset = _dataset(run.verl.data)
    assert dataset.curriculum is not None
    assert {t: len(n) for t, n in dataset.curriculum.problems.items()} == dict.fromkeys(tiers, 3)
