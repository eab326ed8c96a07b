"""What each layer holds, measured on the package itself (tools/code_metrics.py): presentation lives in the
classroom alone, the plain learners name no record of the reproduction, and the training and search entry points
take records instead of long argument lists."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("code_metrics", ROOT / "tools" / "code_metrics.py")
cm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cm)
METRICS = cm.measure(ROOT)


def test_no_style_words_under_learners_kernels_or_targets():
    assert METRICS["style_names_by_file"] == {}


def test_the_learners_name_no_point_or_search():
    assert METRICS["reproduction_records_in_learners_by_file"] == {}


def test_training_and_search_take_records():
    long = [s for v in METRICS["long_signatures_by_file"].values() for s in v]
    assert not [s for s in long if s.split()[0] in ("train_models", "grid_search", "search_split")], long


def test_imports_point_one_way_without_cycles():
    assert METRICS["module_level_upward_imports"] == 0 and METRICS["import_cycles"] == []
