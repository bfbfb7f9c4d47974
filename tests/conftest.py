"""Fixtures shared by several test files."""

import pytest


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """One finished run of configs/smoke.yaml (about 7 s), shared: tests copy it before changing it."""
    from tests.test_train import smoke
    from train.ppo import main

    tmp = tmp_path_factory.mktemp("runs")
    cfg = smoke(tmp)
    run_dir = main(cfg, command=["python", "train/ppo.py", "--config", "configs/smoke.yaml"], progress=False)
    return cfg, run_dir


@pytest.fixture(params=["core", "reference"])
def engine(request):
    """Each engine the AEC envs play on (``engine=`` of soko_v0 / follow_the_bitch_v0): the env
    tests run on both."""
    return request.param
