package dev.spendgateway.edge.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The demo banner names both tokens and gives every pasted command the token its route takes. */
class DemoBannerTest {
  private static final String CALLER = "demo-caller-abc";
  private static final String ADMIN = "demo-admin-xyz";
  private final String banner =
      DemoBanner.render("http://127.0.0.1:8787", CALLER, ADMIN, "http://127.0.0.1:9999");

  @Test
  void printsBothTokensAsExports() {
    assertTrue(banner.contains("export GATEWAY_TOKEN=" + CALLER), banner);
    assertTrue(banner.contains("export GATEWAY_ADMIN_TOKEN=" + ADMIN), banner);
  }

  @Test
  void everyCurlCarriesTheTokenOfItsRoute() {
    List<String> curls =
        List.of(banner.split("\n  curl ")).subList(1, banner.split("\n  curl ").length);
    assertTrue(curls.stream().anyMatch(c -> c.contains("/admin/")), banner);
    for (String curl : curls) {
      String command =
          curl.substring(0, curl.indexOf("\n\n") < 0 ? curl.length() : curl.indexOf("\n\n"));
      boolean admin = command.contains("/admin/");
      assertEquals(admin, command.contains(ADMIN), command);
      assertEquals(!admin, command.contains(CALLER), command);
    }
  }

  @Test
  void showsAVideoJobSubmittedPolledAndDownloadedWithTheCallerToken() {
    assertTrue(banner.contains("curl -s http://127.0.0.1:8787/media/v1/videos \\"), banner);
    assertTrue(banner.contains("-H \"idempotency-key: clip-1\""), banner);
    assertTrue(banner.contains("\"model\":\"sora-2\""), banner);
    assertTrue(banner.contains("/media/v1/videos/ID/content"), banner);
  }
}
