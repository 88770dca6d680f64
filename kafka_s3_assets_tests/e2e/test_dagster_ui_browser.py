"""The Dagster UI in a real browser, as a user drives it: headless Chromium (Debian's `chromium` and
`chromium-driver`, installed by scripts/setup) through Selenium, against the real `dagster dev`
(webserver and daemon) on the embedded stack.

The user opens the asset, sees its topic-partitions, launches a materialization of one partition from
the launch dialog, sees the run succeed, the partition's metadata (offsets, records, objects) and the
completeness check's result; then turns the export sensor on from its page, produces more records, and
sees the sensor launch a run. Screenshots of the key pages are saved under the test's temporary
directory (``screenshots/``).

Waiting is for events (an element, a run's status), each with a deadline; nothing waits for wall time.
"""

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from ..conftest import connector_config
from .dagster_dev import ROOT, DagsterDev
from .test_dagster_ui import free_port, graphql

pytestmark = [pytest.mark.e2e, pytest.mark.kafka, pytest.mark.s3, pytest.mark.registry, pytest.mark.spark,
              pytest.mark.dagster, pytest.mark.browser]

CONNECTOR = "browser-sink"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
UI_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 300.0

RUNS = """
query { runsOrError { ... on Runs { results { runId status tags { key value } } } } }
"""


def browser(tmp_path: Path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    for binary in (CHROMIUM, CHROMEDRIVER):
        if not Path(binary).exists():
            raise AssertionError(f"{binary} is missing: run `bash scripts/setup` (it installs Debian's chromium and "
                                 f"chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1100",
                     f"--user-data-dir={tmp_path / 'chromium-profile'}"):
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

    def screenshot(self, name: str) -> Path:
        path = self.screenshots / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path


def wait_for_run(port: int, predicate, timeout_s: float = RUN_TIMEOUT_S) -> dict:
    """The first run (newest first) the predicate accepts once it has finished; fails on a failed run."""
    deadline = time.monotonic() + timeout_s
    while True:
        runs = graphql(port, RUNS, {})["data"]["runsOrError"]["results"]
        for run in runs:
            tags = {t["key"]: t["value"] for t in run["tags"]}
            if predicate(tags):
                if run["status"] == "SUCCESS":
                    return {**run, "tags": tags}
                assert run["status"] not in ("FAILURE", "CANCELED"), f"run {run['runId']} ended {run['status']}"
        if time.monotonic() > deadline:
            raise AssertionError(f"no finished run as expected within {timeout_s:.0f}s: {runs}")
        time.sleep(0.5)


@pytest.fixture
def dagster_dev(kafka, bucket, tmp_path):
    topic = kafka.create_topic("browser", partitions=2)
    for partition in (0, 1):
        kafka.produce_avro(topic, [{"f1": f"p{partition}-{i}"} for i in range(7)], partition=partition)
    config = connector_config(topic, bucket)
    config.pop("name")
    config_path = tmp_path / "connector.json"
    config_path.write_text(json.dumps({"name": CONNECTOR, "config": config}))
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    env = dict(os.environ, DAGSTER_HOME=str(home), KAFKA_S3_ASSETS_CONNECTORS=str(config_path),
               PYTHONPATH=str(ROOT))
    dev = DagsterDev(home, env, port=free_port())
    try:
        dev.wait_for_line("Serving dagster-webserver")
        yield dev, topic
    finally:
        dev.kill()


def test_a_user_materializes_a_partition_and_turns_the_export_sensor_on_in_the_browser(dagster_dev, kafka,
                                                                                         tmp_path):
    dev, topic = dagster_dev
    screenshots = tmp_path / "screenshots"
    screenshots.mkdir()
    asset_path = f"/assets/kafka_s3/{CONNECTOR}/{topic}"
    driver = browser(tmp_path)
    page = Page(driver, f"http://127.0.0.1:{dev.port}", screenshots)
    try:
        # The asset and its topic-partitions (added by the discovery sensor, which runs by default).
        page.open(asset_path + "?view=partitions")
        page.wait_for_text(f"{topic}/0", f"{topic}/1", timeout_s=RUN_TIMEOUT_S)
        page.screenshot("01-asset-partitions")

        # Materialize one partition from the launch dialog.
        page.click("//button[contains(., 'Materialize')]")
        page.open_dropdown("//div[contains(@class,'TagSelector_tagsContainer')]",  # the partition picker
                           f"//span[text()='{topic}/1']")
        # The picker's entry, not the partition list behind the dialog: the picker is rendered last.
        page.click(f"(//span[text()='{topic}/1'])[last()]")
        page.click("//*[text()='Partition selection']")  # close the picker
        page.wait_for_text("1 partition", "Launch 1 run")
        page.screenshot("02-launch-dialog")
        page.click("//button[contains(., 'Launch')]")
        run = wait_for_run(dev.port, lambda tags: f"{topic}/1" in (tags.get("dagster/partition"),
                                                                   tags.get("dagster/asset_partition_range_start")))
        page.open(f"/runs/{run['runId']}")
        page.wait_for_text("Success")
        page.screenshot("03-run-succeeded")

        # The partition's materialization metadata: 7 records, flush.size 3 -> 2 objects of 3, 6 records.
        page.open(asset_path + f"?view=partitions&partition={topic}%2F1")
        body = page.wait_for_text("Materialized", "start_offset", "next_offset", "records", "objects",
                                  f"topics/{topic}/partition=1/{topic}+1+0000000003.avro")
        lines = body.splitlines()
        assert lines[lines.index("next_offset") + 1] == "6"
        assert lines[lines.index("records") + 1] == "6"
        assert lines[lines.index("objects") + 1] == "2"
        page.screenshot("04-partition-metadata")

        # The completeness check's result for that partition.
        page.open(asset_path + "?view=checks")
        page.wait_for_text("manifests_contiguous", "Passed", f"{topic}/1",
                           "1 manifest(s) cover offsets 0..5 without gap or overlap")
        page.screenshot("05-completeness-check")

        # Turn the export sensor on from its page, produce more, and see the sensor launch a run.
        page.open(f"/locations/kafka_s3_assets/sensors/export_new_records__{CONNECTOR.replace('-', '_')}")
        page.wait_for_text("export_new_records")
        page.click("//input[@type='checkbox']/..")  # the sensor's on/off switch
        page.wait_for_text("Running")
        page.screenshot("06-sensor-running")
        kafka.produce_avro(topic, [{"f1": f"more-{i}"} for i in range(5)], partition=1)
        sensor_run = wait_for_run(dev.port, lambda tags: "dagster/sensor_name" in tags)
        assert sensor_run["tags"]["dagster/sensor_name"] == f"export_new_records__{CONNECTOR.replace('-', '_')}"
        page.open(f"/runs/{sensor_run['runId']}")
        page.wait_for_text("Success", "Launched by")
        page.screenshot("07-sensor-run")
    except Exception:
        page.screenshot("failure")
        raise
    finally:
        driver.quit()
    assert sorted(p.name for p in screenshots.iterdir()) == [
        "01-asset-partitions.png", "02-launch-dialog.png", "03-run-succeeded.png", "04-partition-metadata.png",
        "05-completeness-check.png", "06-sensor-running.png", "07-sensor-run.png"]
