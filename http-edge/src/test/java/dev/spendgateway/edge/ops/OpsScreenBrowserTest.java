package dev.spendgateway.edge.ops;

import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static dev.spendgateway.edge.testkit.TestGateway.JSON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import dev.spendgateway.sim.Usage;
import java.io.File;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.WindowType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The operations screen in a real browser: Debian's chromium, headless, driven by chromedriver.
 * Real calls go through the gateway to the provider simulator first — direct calls, a routed call
 * whose primary answers 410 (its model circuit opens), a routed call whose primary answers 503 (the
 * provider breaker opens, at one failure in this test), a call for a retired model — then the page
 * must show the same numbers as {@code /usage}, the spend of this hour, and the opened circuits and
 * the retired model as alarms. A screenshot is saved as {@code target/ops-screen.png}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpsScreenBrowserTest {
  private static final String TOKEN = "gw-ops-token-5Rk2";
  private static final String CHROMIUM = "/usr/bin/chromium";
  private static final String CHROMEDRIVER = "/usr/bin/chromedriver";

  private TestGateway gw;
  private WebDriver browser;
  private Path profileDir;

  @BeforeAll
  void start() throws Exception {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("gateway.token", TOKEN);
    // One failure opens a provider breaker, and it stays open for the whole test.
    overrides.put("failover.breaker.max-failures", 1);
    overrides.put("failover.breaker.reset-timeout", "10m");
    overrides.put("failover.breaker.max-reset-timeout", "10m");
    gw =
        TestGateway.start(
            new TestGateway.Suite(
                "e2e-test.conf", "ops", SimConfig.defaults().withUsage(new Usage(40, 25, 0, 0, 0))),
            "screen",
            overrides);
    assertTrue(
        new File(CHROMIUM).canExecute() && new File(CHROMEDRIVER).canExecute(),
        "the browser test needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver");
    profileDir = Files.createTempDirectory("ops-chromium");
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM);
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--user-data-dir=" + profileDir,
        "--window-size=1440,1800");
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(new File(CHROMEDRIVER))
            .usingAnyFreePort()
            .build();
    browser = new ChromeDriver(service, options);
  }

  @AfterAll
  void stop() throws Exception {
    if (browser != null) {
      browser.quit();
    }
    if (gw != null) {
      gw.close();
    }
  }

  private HttpResponse<String> call(String path, String body, Brand brand) throws Exception {
    return gw.send(
        gw.postJson(path, body, brand).header("authorization", "Bearer " + TOKEN).build());
  }

  /** A call of the workflow {@code tag}. */
  private HttpResponse<String> call(String path, String body, Brand brand, String tag)
      throws Exception {
    return gw.send(
        gw.postJson(path, body, brand)
            .header("authorization", "Bearer " + TOKEN)
            .header("x-spend-tag", tag)
            .build());
  }

  private static String chat(String model) {
    return "{\"model\":\""
        + model
        + "\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  }

  @Test
  void theScreenShowsWhatTheLedgerAndTheRouterKnow() throws Exception {
    Brand brand = Brand.fresh("ops");
    assertEquals(
        200,
        call(
                ANTHROPIC,
                "{\"model\":\"claude-haiku-5-5\",\"max_tokens\":64,"
                    + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                brand,
                "onboarding")
            .statusCode());
    assertEquals(200, call(CHAT, chat("gpt-6.1-sol-mini"), brand, "onboarding").statusCode());
    // long-draft's primary answers 410: its model circuit opens, Claude Opus answers.
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(410));
    assertEquals(200, call("/v1/chat/completions", chat("long-draft"), brand).statusCode());
    // fast-summary's primary answers 503: OpenAI's breaker opens (one failure here), Claude Haiku
    // answers.
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(503));
    assertEquals(200, call("/v1/chat/completions", chat("fast-summary"), brand).statusCode());
    // A retired model is refused, and counted as in use.
    assertEquals(400, call(CHAT, chat("gpt-4.1"), brand).statusCode());
    gw.awaitSettled(brand.id());

    browser.switchTo().newWindow(WindowType.TAB);
    browser.get(gw.base + "/ops#token=" + TOKEN);
    await(
        d ->
            d.findElements(By.cssSelector("tr.cap[data-cap='brand_daily']")).isEmpty()
                ? null
                : true);

    // The token left the address bar and lives in this tab's storage only.
    assertFalse(browser.getCurrentUrl().contains(TOKEN), browser.getCurrentUrl());
    assertEquals(
        TOKEN,
        ((JavascriptExecutor) browser)
            .executeScript("return sessionStorage.getItem('spendGatewayToken')"));

    // Every cap row the page shows equals /usage's row for the same cap, subject and window.
    JsonNode usage =
        JSON.readTree(gw.send(gw.get("/usage").header("x-api-key", TOKEN).build()).body());
    Map<String, JsonNode> byKey = new HashMap<>();
    for (JsonNode row : usage.get("caps")) {
      byKey.put(
          row.get("cap").asText()
              + "|"
              + (row.get("subject").isNull() ? "" : row.get("subject").asText())
              + "|"
              + row.get("window").asText(),
          row);
    }
    List<WebElement> rows = browser.findElements(By.cssSelector("tr.cap"));
    int compared = 0;
    for (WebElement tr : rows) {
      String key =
          tr.getAttribute("data-cap")
              + "|"
              + tr.getAttribute("data-subject")
              + "|"
              + tr.getAttribute("data-window");
      JsonNode expected = byKey.get(key);
      if (expected == null) {
        continue; // a brand outside /usage's top list
      }
      for (String field : List.of("limitUsd", "spentUsd", "reservedUsd", "remainingUsd")) {
        BigDecimal shown =
            new BigDecimal(
                tr.findElement(By.cssSelector("td[data-field='" + field + "']")).getText());
        assertEquals(
            0,
            expected.get(field).decimalValue().compareTo(shown),
            key + " " + field + ": page " + shown + ", /usage " + expected.get(field));
      }
      compared++;
    }
    assertTrue(
        compared >= 4,
        "global daily/monthly and the brand's daily/monthly rows compared, got " + compared);
    JsonNode globalDaily =
        usage.get("caps").findParents("cap").stream()
            .filter(r -> r.get("cap").asText().equals("global_daily"))
            .findFirst()
            .orElseThrow();
    assertTrue(
        globalDaily.get("spentUsd").decimalValue().signum() > 0,
        "real calls were billed: " + globalDaily);

    // This hour's bar carries today's spend (the data dir is fresh, every call was just made).
    BigDecimal trend =
        new BigDecimal(browser.findElement(By.id("spend-24h-total")).getAttribute("data-usd"));
    assertEquals(
        0,
        globalDaily.get("spentUsd").decimalValue().compareTo(trend),
        "24 h trend " + trend + " vs " + globalDaily);

    // Spend by model and by tag: every call was this node's, so each breakdown sums to today's
    // global spend; the two tagged calls are the tag's row.
    for (String kind : List.of("model", "tag")) {
      BigDecimal sum = BigDecimal.ZERO;
      for (WebElement tr :
          browser.findElements(By.cssSelector("tr.breakdown[data-kind='" + kind + "']"))) {
        sum = sum.add(new BigDecimal(field(tr, "usdToday")));
      }
      assertEquals(
          0,
          globalDaily.get("spentUsd").decimalValue().compareTo(sum),
          "spend by " + kind + " today " + sum + " vs " + globalDaily);
    }
    WebElement onboarding =
        browser.findElement(By.cssSelector("tr.breakdown[data-kind='tag'][data-key='onboarding']"));
    assertEquals("2", field(onboarding, "callsToday"));
    assertEquals("2", field(onboarding, "callsMonth"));
    assertTrue(
        new BigDecimal(field(onboarding, "usdToday")).signum() > 0, "the tagged calls were billed");

    // The alarms: OpenAI's breaker, the model the provider said is gone, the retired model in use.
    assertAlarm("li.alarm[data-alarm='circuit_open'][data-subject='openai']");
    assertAlarm("li.alarm[data-alarm='model_gone'][data-subject='gpt-6.1-sol']");
    assertAlarm(
        "li.alarm[data-alarm='lifecycle'][data-subject='gpt-4.1'][data-lifecycle='retired']");
    assertEquals(
        "open",
        browser
            .findElement(By.cssSelector("tr.circuit[data-provider='openai']"))
            .getAttribute("data-state"));
    assertEquals(
        "closed",
        browser
            .findElement(By.cssSelector("tr.circuit[data-provider='anthropic']"))
            .getAttribute("data-state"));
    // The 503 and the 410 show in OpenAI's failure rate; Claude's answers did not fail.
    WebElement failures =
        browser.findElement(
            By.cssSelector("tr.failure[data-provider='openai'][data-model='gpt-6.1-sol-mini']"));
    assertEquals("1", failures.findElement(By.cssSelector("td[data-field='failures']")).getText());

    Path shot = Path.of("target", "ops-screen.png");
    Files.createDirectories(shot.getParent());
    File png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
    Files.copy(png.toPath(), shot, StandardCopyOption.REPLACE_EXISTING);

    // No log line carries the token (the page sent it only as a header to /ops/data).
    assertTrue(
        gw.logs.allText().stream().noneMatch(l -> l.contains(TOKEN)),
        "the token appeared in a log line");
  }

  private static String field(WebElement tr, String field) {
    return tr.findElement(By.cssSelector("td[data-field='" + field + "']")).getText();
  }

  @Test
  void withoutATokenThePageAsksForIt() {
    // A new tab starts with its own, empty sessionStorage.
    browser.switchTo().newWindow(WindowType.TAB);
    browser.get(gw.base + "/ops");
    WebElement input =
        await(
            d -> {
              WebElement e = d.findElement(By.id("token-input"));
              return e.isDisplayed() ? e : null;
            });
    input.sendKeys("not-the-token");
    browser.findElement(By.id("token-save")).click();
    await(d -> d.findElement(By.id("status")).getText().contains("refused") ? true : null);
    WebElement again = browser.findElement(By.id("token-input"));
    again.sendKeys(TOKEN);
    browser.findElement(By.id("token-save")).click();
    await(d -> d.findElement(By.id("status")).getText().startsWith("updated") ? true : null);
  }

  /** Polls the page until {@code check} gives a value (not null), for up to 20 s. */
  private <T> T await(java.util.function.Function<WebDriver, T> check) {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (true) {
      T value = check.apply(browser);
      if (value != null) {
        return value;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "the page never got there; status: " + browser.findElement(By.id("status")).getText());
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  private void assertAlarm(String css) {
    List<WebElement> found = browser.findElements(By.cssSelector(css));
    assertEquals(1, found.size(), css + " in " + browser.findElement(By.id("alarms")).getText());
  }
}
