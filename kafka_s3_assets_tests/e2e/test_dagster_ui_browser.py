"""The Dagster UI in a real browser, as a user drives it: headless Chromium (Debian's `chromium` and
`chromium-driver`, installed by scripts/setup) through Selenium, against the real `dagster dev`
(webserver and daemon) on the embedded stack.

The user opens the asset, sees its topic-partitions, launches a materialization of one partition from
the launch dialog, sees the run succeed, the partition's metadata (offsets, records, objects, Dagster's
standard URI and row count) and the completeness check's result; executes the checks alone ("Execute
all": nothing is exported); sees the asset's columns (the value schema) and its lineage from the topic's
asset (the two nodes and the edge from the topic to the export, read from the graph's SVG); then turns
the export sensor on from its page, produces more records, and sees the sensor launch a run and observe
the topic's asset. Screenshots of the key pages are saved under the test's temporary directory
(``screenshots/``).

(Dagster 1.13's UI disables a partitioned check's own "Execute" button; a check-only run for chosen
partitions, as its launch sends it, is in test_check_only_runs.py.)

Waiting is for events (an element, a run's status), each with a deadline; nothing waits for wall time.
"""

import json
import time
from pathlib import Path

import pytest

from ..conftest import connector_config, list_keys
from .dagster_dev import DagsterDev
from .test_dagster_ui import free_port, graphql

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.kafka,
    pytest.mark.s3,
    pytest.mark.registry,
    pytest.mark.spark,
    pytest.mark.dagster,
    pytest.mark.browser,
]

CONNECTOR = "browser-sink"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
UI_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 300.0

RUNS = """
query {
  runsOrError { ... on Runs { results {
    runId status tags { key value } assetSelection { path } assetCheckSelection { name } } } }
}
"""
# The asset lineage graph as drawn: its asset nodes (name, source or materializable, box on the screen),
# its group boxes (name, box) and its edges (an SVG path with an arrow at its end: start and end points on
# the screen, through the path's own transform).
LINEAGE_GRAPH_JS = """
const graph = document.querySelector("svg[class*='AssetNodeLineageGraph']");
if (!graph) return null;
const box = (e) => {
  const r = e.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
};
const nodes = [...graph.querySelectorAll("div[class*='AssetNode_assetNodeBox']")].map((node) => ({
  name: (node.querySelector("div[class*='AssetNode_assetName'] [data-tooltip]") || {}).textContent,
  kind: node.className.includes('AssetNode_source') ? 'source'
      : node.className.includes('AssetNode_materializable') ? 'materializable' : 'other',
  box: box(node)}));
const groups = [...graph.querySelectorAll("div[class*='ExpandedGroupNode_groupNodeHeaderBox']")].map((header) => ({
  name: (header.querySelector('[data-tooltip]') || {}).textContent, box: box(header.closest('foreignObject'))}));
const edges = [...graph.querySelectorAll('path[marker-end]')].map((path) => {
  const m = path.getScreenCTM(), length = path.getTotalLength();
  const at = (l) => {
    const p = path.getPointAtLength(l);
    return {x: m.a * p.x + m.c * p.y + m.e, y: m.b * p.x + m.d * p.y + m.f};
  };
  return {start: at(0), end: at(length)};
});
return {nodes: nodes, groups: groups, edges: edges};
"""
# A value schema with field docs and an optional field, for the asset's columns.
ORDER_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "order",
        "fields": [
            {"name": "id", "type": "long", "doc": "Order number"},
            {"name": "customer", "type": "string", "doc": "Who ordered"},
            {"name": "note", "type": ["null", "string"], "default": None, "doc": "Free text, optional"},
        ],
    }
)


def browser(tmp_path: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for binary in (CHROMIUM, CHROMEDRIVER):
        if not Path(binary).exists():
            raise AssertionError(
                f"{binary} is missing: run `bash scripts/setup` (it installs Debian's chromium and chromium-driver)"
            )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,1100",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(argument)
    # The driver from the Debian package: Selenium must not try to download one.
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


class Page:
    """The few things a user does in the UI, each retried while React re-renders the element."""

    def __init__(self, driver, base_url: str, screenshots: Path):
        self.driver = driver
        self.base_url = base_url
        self.screenshots = screenshots

    def open(self, path: str) -> None:
        self.driver.get(self.base_url + path)

    def dismiss_welcome(self) -> None:
        """A fresh browser profile gets Dagster's newsletter dialog once, some moments after a page loads,
        over whatever the user was doing: a user presses Skip and carries on."""
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.by import By

        for button in self.driver.find_elements(By.XPATH, "//button[normalize-space(.)='Skip']"):
            try:
                button.click()
            except WebDriverException:
                pass  # gone already, or re-rendered: the next attempt looks again

    def wait_for(self, xpath: str, timeout_s: float = UI_TIMEOUT_S, clickable: bool = False):
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        condition = ec.element_to_be_clickable if clickable else ec.presence_of_element_located
        wait = WebDriverWait(self.driver, timeout_s, ignored_exceptions=[StaleElementReferenceException])
        return wait.until(condition((By.XPATH, xpath)), message=f"no {xpath} on {self.driver.current_url}")

    def click(self, xpath: str, timeout_s: float = UI_TIMEOUT_S) -> None:
        from selenium.common.exceptions import ElementClickInterceptedException, StaleElementReferenceException

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.wait_for(xpath, max(1.0, deadline - time.monotonic()), clickable=True).click()
                return
            except (StaleElementReferenceException, ElementClickInterceptedException):
                if time.monotonic() > deadline:
                    raise
                self.dismiss_welcome()  # the usual thing in the way
                time.sleep(0.2)  # or the element is being re-rendered: look again

    def open_dropdown(self, opener: str, entry: str, timeout_s: float = UI_TIMEOUT_S) -> None:
        """Clicks ``opener`` until one more ``entry`` is on the page: a click that lands while the dialog
        is still being laid out opens nothing (seen once in the whole suite), so it is tried again."""
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        before = len(self.driver.find_elements(By.XPATH, entry))
        deadline = time.monotonic() + timeout_s
        while True:
            self.click(opener, max(1.0, deadline - time.monotonic()))
            try:
                WebDriverWait(self.driver, 5).until(lambda d: len(d.find_elements(By.XPATH, entry)) > before)
                return
            except TimeoutException:
                if time.monotonic() > deadline:
                    raise

    def wait_for_text(self, *texts: str, timeout_s: float = UI_TIMEOUT_S) -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            body = self.body_text()
            if all(text in body for text in texts):
                return body
            if time.monotonic() > deadline:
                raise AssertionError(f"{texts} not all on {self.driver.current_url}:\n{body[-3000:]}")
            time.sleep(0.3)

    def body_text(self) -> str:
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By

        try:
            return self.driver.find_element(By.TAG_NAME, "body").text
        except StaleElementReferenceException:
            return ""

    def wait_for_lineage_edge(
        self, upstream: tuple[str, str, str], downstream: tuple[str, str, str], timeout_s: float = UI_TIMEOUT_S
    ) -> dict:
        """The lineage graph once it shows both nodes, each ``(group, name, kind)`` (its box inside its
        group's box), and an edge from the upstream node's right side to the downstream node's left side."""
        deadline = time.monotonic() + timeout_s
        while True:
            graph = self.driver.execute_script(LINEAGE_GRAPH_JS)
            if graph is not None and lineage_edge(graph, upstream, downstream) is not None:
                return graph
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no lineage edge {upstream} -> {downstream} on {self.driver.current_url}: "
                    f"{json.dumps(graph, indent=1)}"
                )
            time.sleep(0.3)

    def scroll_to(self, xpath: str) -> None:
        """Scrolls the element into view, for the screenshot to show it."""
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", self.wait_for(xpath))

    def screenshot(self, name: str) -> Path:
        path = self.screenshots / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path


def inside(inner: dict, outer: dict) -> bool:
    return (
        outer["left"] <= inner["left"]
        and inner["right"] <= outer["right"]
        and outer["top"] <= inner["top"]
        and inner["bottom"] <= outer["bottom"]
    )


def lineage_node(graph: dict, group: str, name: str, kind: str) -> dict | None:
    """The node of that name and kind drawn inside the box of that group."""
    boxes = [g["box"] for g in graph["groups"] if g["name"] == group]
    return next(
        (
            n
            for n in graph["nodes"]
            if (n["name"], n["kind"]) == (name, kind) and any(inside(n["box"], b) for b in boxes)
        ),
        None,
    )


def lineage_edge(graph: dict, upstream: tuple[str, str, str], downstream: tuple[str, str, str]) -> dict | None:
    """An edge drawn from the upstream node's right side to the downstream node's left side (within a
    twentieth of a node's width: the arrow head ends short of the box)."""
    source, target = lineage_node(graph, *upstream), lineage_node(graph, *downstream)
    if source is None or target is None:
        return None
    near = (source["box"]["right"] - source["box"]["left"]) / 20
    return next(
        (
            e
            for e in graph["edges"]
            if abs(e["start"]["x"] - source["box"]["right"]) <= near
            and source["box"]["top"] <= e["start"]["y"] <= source["box"]["bottom"]
            and abs(e["end"]["x"] - target["box"]["left"]) <= near
            and target["box"]["top"] <= e["end"]["y"] <= target["box"]["bottom"]
        ),
        None,
    )


def wait_for_run(port: int, predicate, timeout_s: float = RUN_TIMEOUT_S) -> dict:
    """The first run (newest first) the predicate accepts once it has finished; fails on a failed run.
    The predicate gets the run with its tags as a dict."""
    deadline = time.monotonic() + timeout_s
    while True:
        runs = graphql(port, RUNS, {})["data"]["runsOrError"]["results"]
        for run in runs:
            run = {**run, "tags": {t["key"]: t["value"] for t in run["tags"]}}
            if predicate(run):
                if run["status"] == "SUCCESS":
                    return run
                assert run["status"] not in ("FAILURE", "CANCELED"), f"run {run['runId']} ended {run['status']}"
        if time.monotonic() > deadline:
            raise AssertionError(f"no finished run as expected within {timeout_s:.0f}s: {runs}")
        time.sleep(0.5)


@pytest.fixture
def dagster_dev(kafka, bucket, tmp_path):
    topic = kafka.create_topic("browser", partitions=2)
    for partition in (0, 1):
        kafka.produce_avro(
            topic,
            [{"id": i, "customer": f"c{partition}-{i}", "note": None if i % 2 else "gift"} for i in range(7)],
            partition=partition,
            schema=ORDER_SCHEMA,
        )
    config = connector_config(topic, bucket)
    config.pop("name")
    dev = DagsterDev.serving(tmp_path, CONNECTOR, config, port=free_port())
    try:
        dev.wait_until_serving()
        yield dev, topic
    finally:
        dev.kill()


def test_a_user_materializes_a_partition_and_turns_the_export_sensor_on_in_the_browser(
    dagster_dev, kafka, s3_client, bucket, tmp_path
):
    dev, topic = dagster_dev
    screenshots = tmp_path / "screenshots"
    screenshots.mkdir()
    asset_path = f"/assets/kafka_s3/{CONNECTOR}/{topic}"
    driver = browser(tmp_path)
    page = Page(driver, f"http://127.0.0.1:{dev.port}", screenshots)
    try:
        # The asset and its topic-partitions (added when the code location loaded).
        page.open(asset_path + "?view=partitions")
        page.wait_for_text(f"{topic}/0", f"{topic}/1", timeout_s=RUN_TIMEOUT_S)
        page.screenshot("01-asset-partitions")

        # Materialize one partition from the launch dialog.
        page.click("//button[contains(., 'Materialize')]")
        # The picker's entry (in its menu), not the partition list behind the dialog.
        entry = f"//ul[contains(@class,'Menu_menu')]//span[text()='{topic}/1']"
        page.open_dropdown("//div[contains(@class,'TagSelector_tagsContainer')]", entry)  # the partition picker
        page.click(entry)
        page.click("//*[text()='Partition selection']")  # close the picker
        page.wait_for_text("1 partition", "Launch 1 run")
        page.screenshot("02-launch-dialog")
        page.click("//button[contains(., 'Launch')]")
        run = wait_for_run(
            dev.port,
            lambda run: (
                f"{topic}/1"
                in (run["tags"].get("dagster/partition"), run["tags"].get("dagster/asset_partition_range_start"))
            ),
        )
        page.open(f"/runs/{run['runId']}")
        page.wait_for_text("Success")
        page.screenshot("03-run-succeeded")

        # The partition's materialization metadata: 7 records, flush.size 3 -> 2 objects of 3, 6 records;
        # Dagster's standard keys: where the export lives, and the partition's records in S3 so far.
        page.open(asset_path + f"?view=partitions&partition={topic}%2F1")
        body = page.wait_for_text(
            "Materialized",
            "start_offset",
            "next_offset",
            "records",
            "objects",
            f"topics/{topic}/partition=1/{topic}+1+0000000003.avro",
            "dagster/uri",
            "dagster/partition_row_count",
        )
        lines = body.splitlines()
        assert lines[lines.index("next_offset") + 1] == "6"
        assert lines[lines.index("records") + 1] == "6"
        assert lines[lines.index("objects") + 1] == "2"
        assert lines[lines.index("dagster/uri") + 1] == f"s3://{bucket}/topics/{topic}/"
        assert lines[lines.index("dagster/partition_row_count") + 1] == "6"
        assert "Unsynced" not in body  # in sync with the topic's asset upstream
        page.scroll_to("//*[text()='dagster/uri']")
        page.screenshot("04-partition-metadata")

        # The completeness check's result for that partition.
        page.open(asset_path + "?view=checks")
        page.wait_for_text(
            "manifests_contiguous",
            "Passed",
            f"{topic}/1",
            "1 manifest(s) cover offsets 0..5 without gap or overlap",
            "blocking",
        )
        page.screenshot("05-completeness-check")

        # Execute the checks alone: every known topic-partition is checked, nothing is exported (partition
        # 0 has 7 records waiting).
        page.click("//button[contains(., 'Execute all')]")
        checks_run = wait_for_run(dev.port, lambda run: not run["assetSelection"] and run["assetCheckSelection"])
        assert [c["name"] for c in checks_run["assetCheckSelection"]] == ["manifests_contiguous"]
        page.open(f"/runs/{checks_run['runId']}")
        # (The run's header and event types may be shortened with "…" to fit, in the middle of the asset's
        # key, by as much as the date beside it takes: the check's evaluation is read from its event's message.)
        page.wait_for_text(
            "Success",
            "manifests_contiguous on kafka_s",
            f"/ {topic}",
            "Check manifests_contiguous succeeded",
        )
        page.screenshot("06-check-only-run")
        assert list_keys(s3_client, bucket, f"topics/{topic}/partition=0/") == []

        # The asset's columns: the value schema it wrote, with types, nullability and the fields' docs.
        page.open(asset_path)
        body = page.wait_for_text(
            "Columns",
            "Column name",
            "Order number",
            "Who ordered",
            "Free text, optional",
            f"s3://{bucket}/topics/{topic}/",
        )
        columns = body[body.index("Column name Type Description") :].split("\n")
        assert columns[1:12] == [
            "id",
            "int64",
            "non-nullable",
            "Order number",
            "customer",
            "string",
            "non-nullable",
            "Who ordered",
            "note",
            "string",
            "Free text, optional",
        ]
        page.screenshot("07-columns")

        # Its lineage: the topic's external asset (kafka/<topic>: a source node named after the topic, in the
        # group kafka) upstream of the export (a materializable node, in the connector's group), and the
        # edge between them, from the topic to the export.
        page.open(asset_path + "?view=lineage")
        topic_node, export_node = ("kafka", topic, "source"), (CONNECTOR.replace("-", "_"), topic, "materializable")
        graph = page.wait_for_lineage_edge(topic_node, export_node)
        assert lineage_edge(graph, export_node, topic_node) is None  # no edge the other way
        page.dismiss_welcome()
        page.screenshot("08-lineage")
        page.open(f"/assets/kafka/{topic}")
        page.wait_for_text("External Asset", "Kafka topic", "Downstream assets")
        page.wait_for(f"//a[contains(@href, '{asset_path}')]")  # the export, downstream
        page.screenshot("09-topic-asset")

        # Turn the export sensor on from its page, produce more, and see the sensor launch a run.
        page.open(f"/locations/kafka_s3_assets/sensors/export_new_records__{CONNECTOR.replace('-', '_')}")
        page.wait_for_text("export_new_records")
        page.click("//input[@type='checkbox']/..")  # the sensor's on/off switch
        page.wait_for_text("Running")
        page.screenshot("10-sensor-running")
        kafka.produce_avro(
            topic,
            [{"id": 100 + i, "customer": "more", "note": None} for i in range(5)],
            partition=1,
            schema=ORDER_SCHEMA,
        )
        sensor_run = wait_for_run(dev.port, lambda run: "dagster/sensor_name" in run["tags"])
        assert sensor_run["tags"]["dagster/sensor_name"] == f"export_new_records__{CONNECTOR.replace('-', '_')}"
        page.open(f"/runs/{sensor_run['runId']}")
        page.wait_for_text("Success", "Launched by", "RUN_SUCCESS")
        page.screenshot("11-sensor-run")

        # The running export sensor observes the topic's asset with its watermarks (7 + 12 records).
        page.open(f"/assets/kafka/{topic}")
        body = page.wait_for_text("high_watermark_total", "records_in_log", "partitions_observed")
        lines = body.splitlines()
        assert lines[lines.index("high_watermark_total") + 2] == "19"  # key, timestamp, value
        page.screenshot("12-topic-observed")
    except Exception:
        page.screenshot("failure")
        raise
    finally:
        driver.quit()
    assert sorted(p.name for p in screenshots.iterdir()) == [
        "01-asset-partitions.png",
        "02-launch-dialog.png",
        "03-run-succeeded.png",
        "04-partition-metadata.png",
        "05-completeness-check.png",
        "06-check-only-run.png",
        "07-columns.png",
        "08-lineage.png",
        "09-topic-asset.png",
        "10-sensor-running.png",
        "11-sensor-run.png",
        "12-topic-observed.png",
    ]
