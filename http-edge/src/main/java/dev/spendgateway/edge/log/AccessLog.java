package dev.spendgateway.edge.log;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Writes one JSON object per call to the {@code access} logger (stdout by default). */
public final class AccessLog {
  private static final Logger ACCESS = LoggerFactory.getLogger("access");
  private static final ObjectMapper JSON = new ObjectMapper();

  private AccessLog() {}

  public static void write(AccessRecord r) {
    if (ACCESS.isInfoEnabled()) {
      ACCESS.info(toJson(r));
    }
  }

  /** Stable field names; nulls are written so every line has the same keys. */
  static String toJson(AccessRecord r) {
    ObjectNode n = JSON.createObjectNode();
    n.put("time", r.time().toString());
    n.put("request_id", r.requestId());
    n.put("route", r.route());
    n.put("provider", r.provider());
    n.put("lane", r.lane());
    n.put("brand", r.brand());
    n.put("model", r.model());
    n.put("status", r.status());
    n.put("reserved_usd", r.reservedUsd());
    n.put("settled_usd", r.settledUsd());
    n.put("duration_ms", r.durationMs());
    n.put("error", r.errorClass());
    n.put("failover", r.failover());
    n.put("profile", r.profile());
    n.put("data_class", r.dataClass());
    return n.toString();
  }
}
