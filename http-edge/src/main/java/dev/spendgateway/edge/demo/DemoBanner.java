package dev.spendgateway.edge.demo;

/**
 * What {@code bin/gateway --demo} prints once the gateway is ready: the two demo tokens (the
 * callers' and the operator's) and commands a new user can paste as they are, each with the token
 * its route takes (a video job's too: the demo serves the media routes from the simulator). Printed
 * on stdout, once, at start — the only place a token is ever printed, and only the throwaway demo
 * tokens.
 */
public final class DemoBanner {
  private DemoBanner() {}

  public static String render(
      String baseUrl, String token, String adminToken, String simulatorUrl) {
    return """

        ==== spend gateway demo ====
        Gateway:   %1$s   (upstreams: built-in provider simulator at %3$s)
        Token:     export GATEWAY_TOKEN=%2$s          (callers: provider routes, /usage, /ledger)
        Admin:     export GATEWAY_ADMIN_TOKEN=%4$s   (operator only: /admin, bin/gateway-admin)

        Ask Claude (through the gateway, billed to brand "acme"):
          curl -s %1$s/anthropic/v1/messages \\
            -H "x-api-key: %2$s" -H "anthropic-version: 2023-06-01" -H "content-type: application/json" \\
            -H "x-spend-lane: app" -H "x-spend-brand: acme" \\
            -H "x-spend-brand-monthly-usd: 50" -H "x-spend-brand-daily-usd: 5" \\
            -d '{"model":"claude-opus-5-5","max_tokens":256,"messages":[{"role":"user","content":"Hello"}]}'

        Make a 4-second video clip (4 s x $0.10 reserved before the media provider is asked; the
        same idempotency-key again answers the same job; a sixth unfinished clip is told 429 to wait):
          curl -s %1$s/media/v1/videos \\
            -H "x-api-key: %2$s" -H "content-type: application/json" \\
            -H "x-spend-lane: app" -H "x-spend-brand: acme" -H "idempotency-key: clip-1" \\
            -H "x-spend-brand-monthly-usd: 50" -H "x-spend-brand-daily-usd: 5" \\
            -d '{"model":"sora-2","prompt":"a paper boat on a river","seconds":"4","size":"1280x720"}'
        then poll it with the "id" it answered, and download it once "status" is "completed":
          curl -s %1$s/media/v1/videos/ID -H "x-api-key: %2$s"
          curl -s %1$s/media/v1/videos/ID/content -H "x-api-key: %2$s" -o clip.mp4

        See what it cost and what is left under every cap:
          curl -s %1$s/usage -H "x-api-key: %2$s"

        Reserve and settle directly in the ledger:
          curl -s %1$s/ledger/reservations -H "x-api-key: %2$s" -H "content-type: application/json" \\
            -d '{"id":"r-1","lane":"app","brand":"acme","amountUsd":0.30,"brandDailyUsd":5,"brandMonthlyUsd":50}'

        As the operator, void that reservation (admin routes take the admin token; the caller token gets 401):
          curl -s %1$s/admin/reservations/r-1/void -H "x-api-key: %4$s" -H "content-type: application/json" \\
            -d '{"operator":"demo","reason":"demo: the provider did not bill"}'

        With the official OpenAI Java SDK (only the base URL and key change):
          OpenAIClient client = OpenAIOkHttpClient.builder()
              .baseUrl("%1$s/openai/v1").apiKey("%2$s").build();
          client.chat().completions().create(ChatCompletionCreateParams.builder()
              .model("gpt-6.1-sol").addUserMessage("Hello").maxCompletionTokens(256)
              .putAdditionalHeader("x-spend-lane", "free").build());

        Stop with Ctrl-C (or SIGTERM): in-flight calls finish, then it exits 0.
        ============================
        """
        .formatted(baseUrl, token, simulatorUrl, adminToken);
  }
}
