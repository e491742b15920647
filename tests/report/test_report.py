"""write_report: every part of a run folder shows up, with the numbers it holds, as real plots; what is
missing is said; the HTML page embeds its plots and nothing external; the same inputs give the same bytes."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from trace_envs.report import ReportInputError, collect_inputs, write_report
from trace_envs.report.scores import gains
from trace_envs.training.metadata import save_metadata

from .conftest import adapter_metadata, analysis

SECTION_TITLES = [
    "Evaluation on tau2",
    "Pass rate against rollouts spent",
    "Methods and rollouts spent",
    "Capability selection and coverage",
    "Synthesis gate table",
    "Training curves",
]


class Page(HTMLParser):
    """The tags and image sources of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.images: list[dict[str, str | None]] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "img":
            self.images.append(dict(attrs))
        self.links += [value or "" for name, value in attrs if name in ("href", "src") and tag != "img"]


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


def distinct_colours(path: Path) -> int:
    """How many different RGB colours a PNG holds (a blank image has one)."""
    import matplotlib.image

    pixels = matplotlib.image.imread(str(path))[:, :, :3].reshape(-1, 3)
    return len({tuple(p) for p in pixels[:: max(1, len(pixels) // 20000)].tolist()})


def test_every_part_of_the_run_is_reported(run_dir: Path, tmp_path: Path) -> None:
    files = write_report(run_dir, tmp_path / "report")
    text = files.markdown.read_text(encoding="utf-8")
    assert files.missing == []
    assert [line[3:] for line in text.splitlines() if line.startswith("## ")] == SECTION_TITLES
    # pass rates with their intervals, per domain and over the union
    assert "| base | base model | `hf:tiny` | greedy | overall | 20 | 30.0% [20.0%, 40.0%] | k=1: 30.0% |" in text
    assert "| trace | routed adapters (TRACE) | `routed` | greedy | airline | 10 | 45.0% [35.0%, 55.0%] |" in text
    assert "| trace | base | overall | 20 | 5/1/14 | +20.0 pts | 0.219 |" in text  # the paired comparison
    # route-only evaluation: both of the routed policy's adapters are candidates, each evaluated alone
    assert "| `structured_data_reasoning` | `adapters/structured_data_reasoning` | structured_data_reasoning |" in text
    assert "| `precondition_verification` | `adapters/precondition_verification` | precondition_verification |" in text
    assert "| `__base__` (the base model alone) | none | base |" in text
    # methods side by side: TRACE's adapters (their budget is max_steps x 8 rollouts) and the GRPO baseline
    assert "| TRACE adapter `structured_data_reasoning` | `trace/structured_data_reasoning-v0` | 32 | 32 |" in text
    assert "| TRACE adapter `precondition_verification` | `trace/precondition_verification-v0` | 32 | 24 |" in text
    assert "| grpo | `trace/tau2-v0` | 56 | 56 | `baselines/grpo/adapter` |" in text
    assert "TRACE's adapters spent 56 rollouts in all" in text
    # analysis, gate table (a skipped calibration, a rejection with its reason), training
    assert "| `precondition_verification` | 2/3 | 30.0% [20.0%, 35.0%] | +0.25 | yes |" in text
    assert "| catalogue, 1 | passed | passed | passed | passed | passed | passed | skipped | $0.0000 |" in text
    assert (
        "| tau2 | `tool_calling_precision` | catalogue | 3 | capability | the flawed solution passes the verifier |"
        in text
    )
    assert "| complete | 4 | 32 | 0.60 | 1/8 |" in text
    names = [p.name for p in files.plots]
    assert names == [
        "pass_rate_tau2.png", "capability_gains_tau2.png", "rollouts_tau2.png",
        "selection_frequency.png", "coverage.png", "training_curves.png",
    ]  # fmt: skip
    for plot in files.plots:
        assert f"]({plot.name})" in text  # the Markdown shows it from beside the report
        assert plot.read_bytes().startswith(b"\x89PNG")
        assert distinct_colours(plot) > 20, f"{plot.name} looks blank"


def test_gains_are_over_the_base_and_leave_out_baselines(run_dir: Path) -> None:
    inputs = collect_inputs(run_dir)
    rows = gains(inputs.evaluations[0].results, inputs)
    assert [(name, round(100 * gain, 6)) for name, _, gain in rows] == [
        ("structured_data_reasoning", 10.0),
        ("precondition_verification", -5.0),
    ]  # grpo is an adapter policy too, but the baseline's


def test_the_html_page_embeds_its_plots_and_nothing_else(run_dir: Path, tmp_path: Path) -> None:
    files = write_report(run_dir, tmp_path / "report")
    html = files.html.read_text(encoding="utf-8")
    page = parse(html)
    assert "script" not in page.tags and "link" not in page.tags and page.links == []
    assert "http://" not in html and "https://" not in html
    sources = [image["src"] or "" for image in page.images]
    assert len(sources) == len(files.plots)
    for source, plot in zip(sources, files.plots, strict=True):
        assert source.startswith("data:image/png;base64,")
        assert base64.b64decode(source.split(",", 1)[1]) == plot.read_bytes()
    assert page.tags.count("table") == 9  # policies, paired, route (2), methods, analysis, gates, rejected, training
    assert '<td class="skip">skipped</td>' in html and "<code>hf:tiny</code>" in html


def test_text_from_the_run_is_escaped_in_html(run_dir: Path, tmp_path: Path) -> None:
    result = analysis()
    result.config.analyst = "<script>alert(1)</script>"
    (run_dir / "analysis" / "analysis.json").write_text(result.model_dump_json(), encoding="utf-8")
    html = write_report(run_dir, tmp_path / "report").html.read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_what_is_missing_is_said(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    files = write_report(empty, tmp_path / "report")
    assert files.plots == []
    assert [m.split(":")[0] for m in files.missing] == [
        "Evaluation", "Pass rate against rollouts spent", "Methods and rollouts spent",
        "Capability selection and coverage", "Synthesis gate table", "Training curves",
    ]  # fmt: skip
    text = files.markdown.read_text(encoding="utf-8")
    assert "- Synthesis gate table: no synthesis manifest.json: run `trace-envs synthesize ANALYSIS --out DIR`." in text
    assert (
        "<li>Training curves: no adapter (trace_adapter.json): train one with <code>trace-envs train</code>.</li>"
        in (files.html.read_text(encoding="utf-8"))
    )


def test_a_partial_run_shows_what_it_has(tmp_path: Path) -> None:
    run = tmp_path / "run"
    save_metadata(run / "adapter", adapter_metadata("datetime_reasoning", 2, 0.2))
    files = write_report(run, tmp_path / "report", notes=["Simulated: a scripted base agent."])
    assert [p.name for p in files.plots] == ["training_curves.png"]
    assert [m.split(":")[0] for m in files.missing] == [
        "Evaluation", "Pass rate against rollouts spent", "Capability selection and coverage", "Synthesis gate table",
    ]  # fmt: skip
    text = files.markdown.read_text(encoding="utf-8")
    assert "Simulated: a scripted base agent." in text
    assert "| `adapter` | datetime_reasoning | `trace/datetime_reasoning-v0` | complete | 2 | 16 | 0.60 | 1/4 |" in text


def test_the_same_run_gives_the_same_report(run_dir: Path, tmp_path: Path) -> None:
    first = write_report(run_dir, tmp_path / "a")
    second = write_report(run_dir, tmp_path / "b")
    assert first.html.read_bytes() == second.html.read_bytes()
    assert first.markdown.read_bytes() == second.markdown.read_bytes()


def test_inputs_are_found_by_name_and_foreign_files_passed_over(run_dir: Path) -> None:
    save_metadata(run_dir / "adapters" / "structured_data_reasoning" / "checkpoints" / "checkpoint-2",
                  adapter_metadata("structured_data_reasoning", 2, 0.1))  # fmt: skip
    save_metadata(run_dir / "baselines" / "grpo" / "adapter", adapter_metadata("multi_capability", 7, 0.1))
    for hidden in (".venv/lib/site-packages/x", "node_modules/y"):  # never entered: these would not parse
        (run_dir / hidden).mkdir(parents=True)
        (run_dir / hidden / "analysis.json").write_text("{", encoding="utf-8")
    (run_dir / "other").mkdir()
    (run_dir / "other" / "manifest.json").write_text(json.dumps({"name": "a web app"}), encoding="utf-8")
    (run_dir / "other" / "results.json").write_text(json.dumps([1, 2]), encoding="utf-8")
    inputs = collect_inputs(run_dir)
    assert [a.path.name for a in inputs.adapters] == ["precondition_verification", "structured_data_reasoning"]
    assert [b.run.method for b in inputs.baselines] == ["grpo"]  # its adapter is not one of TRACE's
    assert [m.path for m in inputs.manifests] == [run_dir / "envs" / "manifest.json"]
    assert len(inputs.evaluations) == 1 and [a.path for a in inputs.analyses] == [
        run_dir / "analysis" / "analysis.json"
    ]


@pytest.mark.parametrize(
    ("relative", "content", "needle"),
    [
        ("analysis/analysis.json", "{not json", "not readable JSON"),
        ("analysis/analysis.json", '{"config": {}}', "not an analysis result (trace-envs analyze writes it)"),
        ("adapters/structured_data_reasoning/trace_adapter.json", '{"capability": 3}', "not an adapter's metadata"),
        ("baselines/grpo/baseline.json", '{"method": "grpo"}', "not a baseline record"),
        ("evaluation/results.json", '{"format": "trace-envs/evaluation@1"}', "not a trace-envs evaluation results"),
        ("route/tau2.routes.json", '[{"task": 3}]', "not a routes file (the pipeline's route stage writes it)"),
        ("analyze/retail/analysis.json", "[]", "not an analysis result"),  # every analysis is read, not the first
    ],
)
def test_a_malformed_file_is_one_line_naming_it(run_dir: Path, relative: str, content: str, needle: str) -> None:
    (run_dir / relative).parent.mkdir(parents=True, exist_ok=True)
    (run_dir / relative).write_text(content, encoding="utf-8")
    with pytest.raises(ReportInputError) as caught:
        collect_inputs(run_dir)
    message = str(caught.value)
    assert str(run_dir / relative) in message and needle in message and "\n" not in message
