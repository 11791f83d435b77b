package dev.spendgateway.operator;

import static dev.spendgateway.operator.AdminClient.encode;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The verbs that act through the running gateway's {@code /admin} API ({@link AdminClient}): {@code
 * credit}, {@code adjust}, {@code settle}, {@code void}, {@code status}, {@code reset-circuit}.
 * Each write is journaled by the gateway with the operator and the reason.
 *
 * <p>{@code credit} and {@code adjust} send an adjustment id ({@code --id}, else a new {@code
 * adj-<uuid>}), which the gateway applies at most once; when the outcome is unknown (no answer, a
 * broken connection, a 5xx) they print how to rerun safely with that id.
 */
final class AdminHttpVerbs {
  private AdminHttpVerbs() {}

  /** {@code --reason} of every write verb: each admin write is journaled with who and why. */
  static final class ReasonOption {
    @Option(
        names = "--reason",
        required = true,
        paramLabel = "TEXT",
        description = "Why (journaled).")
    String reason;

    /** Adds the reason and the operator ({@code --operator}, else {@code $USER}) to the body. */
    void addTo(Map<String, Object> body, GatewayOptions gateway) {
      body.put("reason", reason);
      body.put("operator", gateway.operator());
    }
  }

  /** {@code --id} of credit and adjust. */
  static final class AdjustmentIdOption {
    @Option(
        names = "--id",
        paramLabel = "ID",
        description =
            "Adjustment id, 1-64 characters of [A-Za-z0-9._:-] (e.g. ticket-812-refund). "
                + "The gateway applies an id at most once: rerunning with the same --id after a "
                + "timeout or error is safe; the same id with other values is refused (HTTP 409). "
                + "Default: a new adj-<uuid>, printed before sending.")
    String id;

    String idOrNew() {
      return id != null ? id : "adj-" + UUID.randomUUID();
    }
  }

  /** {@code --window} and {@code --scope} of credit and adjust: which window, and whose caps. */
  static final class TargetOptions {
    @Option(
        names = "--window",
        required = true,
        paramLabel = "DAY|MONTH",
        description =
            "The UTC day (2026-11-29) or month (2026-11) the correction is for. Only the "
                + "cap windows containing it move: a refund for yesterday lowers yesterday and this "
                + "month, never today's daily caps.")
    String window;

    @Option(
        names = "--scope",
        required = true,
        paramLabel = "grant|refund",
        description =
            "grant: only the brand's (or preview's) own caps (the company gives the "
                + "brand room); refund: the lane pool and the global caps too (the provider gave "
                + "money back, or a missed bill is charged).")
    String scope;

    void addTo(Map<String, Object> body) {
      body.put("window", window);
      body.put("scope", scope);
    }
  }

  @Command(
      name = "credit",
      mixinStandardHelpOptions = true,
      description = {
        "Give a brand money back, through the running gateway.",
        "Lowers the brand's settled spend by USD in the windows containing --window; with --scope "
            + "refund the",
        "global caps' too. Journaled as SpendAdjusted with operator and reason.",
        "Applied at most once per adjustment id (--id): after a timeout or error, rerun with "
            + "the id it printed."
      })
  static final class Credit implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Mixin AdjustmentIdOption adjustmentId;

    @Option(names = "--brand", required = true, paramLabel = "BRAND", description = "The brand id.")
    String brand;

    @Option(
        names = "--usd",
        required = true,
        paramLabel = "USD",
        description = "Amount to credit (positive).")
    BigDecimal usd;

    @Mixin TargetOptions target;

    @Mixin ReasonOption why;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("usd", usd);
      target.addTo(body);
      why.addTo(body, gateway);
      return new AdminClient(spec, gateway)
          .postAdjustment(
              "/admin/brands/" + encode(brand) + "/credit", body, adjustmentId.idOrNew());
    }
  }

  @Command(
      name = "adjust",
      mixinStandardHelpOptions = true,
      description = {
        "Correct settled spend on a lane's caps, through the running gateway.",
        "Moves the windows containing --window by a signed USD amount (positive = charge a missed "
            + "cost,",
        "negative = credit). Journaled as SpendAdjusted with operator and reason.",
        "Applied at most once per adjustment id (--id): after a timeout or error, rerun with "
            + "the id it printed."
      })
  static final class Adjust implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Mixin AdjustmentIdOption adjustmentId;

    @Option(
        names = "--lane",
        defaultValue = "app",
        paramLabel = "LANE",
        description = "app, trial or free (default app).")
    String lane;

    @Option(
        names = "--brand",
        paramLabel = "SUBJECT",
        description = "Brand (app) or preview id (trial).")
    String brand;

    @Option(names = "--usd", required = true, paramLabel = "USD", description = "Signed amount.")
    BigDecimal usd;

    @Mixin TargetOptions target;

    @Mixin ReasonOption why;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("lane", lane);
      body.put("brand", brand);
      body.put("deltaUsd", usd);
      target.addTo(body);
      why.addTo(body, gateway);
      return new AdminClient(spec, gateway)
          .postAdjustment("/admin/adjustments", body, adjustmentId.idOrNew());
    }
  }

  @Command(
      name = "settle",
      mixinStandardHelpOptions = true,
      description =
          "Settle an open reservation at USD on the caller's behalf. Journaled with "
              + "operator and reason.")
  static final class Settle implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Parameters(index = "0", paramLabel = "ID", description = "Reservation id.")
    String id;

    @Option(names = "--usd", required = true, paramLabel = "USD", description = "Actual cost.")
    BigDecimal usd;

    @Mixin ReasonOption why;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("actualUsd", usd);
      why.addTo(body, gateway);
      return new AdminClient(spec, gateway)
          .post("/admin/reservations/" + encode(id) + "/settle", body);
    }
  }

  @Command(
      name = "void",
      mixinStandardHelpOptions = true,
      description =
          "Void an open reservation (close at $0: the provider did not bill). Journaled "
              + "with operator and reason.")
  static final class VoidReservation implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Parameters(index = "0", paramLabel = "ID", description = "Reservation id.")
    String id;

    @Mixin ReasonOption why;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      why.addTo(body, gateway);
      return new AdminClient(spec, gateway)
          .post("/admin/reservations/" + encode(id) + "/void", body);
    }
  }

  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description = {
        "Show the running gateway: ready or not, caps, open reservations and circuits.",
        "The global and pool caps, open reservations, each provider's circuit breaker and the "
            + "models whose circuit a 410 opened (GET /admin/status, admin token).",
        "Exit 0 when ready, 1 when not (the ledger has not recovered), 2 when the gateway did not "
            + "answer."
      })
  static final class Status implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      return new AdminClient(spec, gateway).status();
    }
  }

  @Command(
      name = "reset-circuit",
      mixinStandardHelpOptions = true,
      description = {
        "Close a model's circuit that a provider's 410 (model gone) opened.",
        "Run it after fixing the catalog or the profile (POST /admin/circuits/MODEL/reset, admin "
            + "token); until then the router does not call that model. A model not in the "
            + "catalog is refused."
      })
  static final class ResetCircuit implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Parameters(
        index = "0",
        paramLabel = "MODEL",
        description = "The model id, as in conf/models.conf.")
    String model;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      return new AdminClient(spec, gateway)
          .post("/admin/circuits/" + encode(model) + "/reset", new LinkedHashMap<>());
    }
  }
}
