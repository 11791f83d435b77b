package dev.spendgateway.operator;

import java.net.URI;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * How to reach the running gateway's {@code /admin} routes (a mixin of the write verbs): they take
 * the operator's token ({@code GATEWAY_ADMIN_TOKEN}), never the callers' {@code GATEWAY_TOKEN}.
 */
final class GatewayOptions {
  @Spec(Spec.Target.MIXEE)
  CommandLine.Model.CommandSpec mixee;

  @Option(
      names = "--host",
      paramLabel = "HOST",
      description = "Gateway host. Default: $GATEWAY_HOST, else 127.0.0.1.")
  String host;

  @Option(
      names = "--port",
      paramLabel = "PORT",
      description = "Gateway port. Default: $GATEWAY_PORT, else 8787.")
  Integer port;

  @Option(
      names = "--admin-token",
      paramLabel = "TOKEN",
      description =
          "The operator's admin token (not the callers' gateway token). Default: "
              + "$GATEWAY_ADMIN_TOKEN.")
  String adminToken;

  @Option(
      names = "--operator",
      paramLabel = "NAME",
      description = "Who does this (journaled). Default: $USER.")
  String operator;

  /** {@code path} on the gateway (an IPv6 host in brackets). */
  URI uri(String path) {
    String h = host != null ? host : env("GATEWAY_HOST", "127.0.0.1");
    int p = port != null ? port : Integer.parseInt(env("GATEWAY_PORT", "8787"));
    return URI.create("http://" + (h.contains(":") ? "[" + h + "]" : h) + ":" + p + path);
  }

  /** The admin token; refused, naming both ways to give it, when there is none. */
  String adminToken() {
    String t = adminToken != null ? adminToken : env("GATEWAY_ADMIN_TOKEN", null);
    if (t == null || t.isBlank()) {
      throw new IllegalStateException(
          "no admin token: set GATEWAY_ADMIN_TOKEN (the operator's "
              + "token, not GATEWAY_TOKEN) or pass --admin-token");
    }
    return t;
  }

  String operator() {
    return operator != null ? operator : env("USER", System.getProperty("user.name", "operator"));
  }

  private String env(String name, String fallback) {
    String v = ((GatewayAdmin) mixee.root().userObject()).env.apply(name);
    return v == null || v.isBlank() ? fallback : v;
  }
}
