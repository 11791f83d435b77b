package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import java.util.List;

/** Rewrites shared by both OpenAI JSON routes. */
final class OpenAiBodies {
  private OpenAiBodies() {}

  /**
   * Every OpenAI body gets {@code store: false}: nothing a caller sends through our key is kept on
   * OpenAI's side. A caller who asked for storage is told it was overridden.
   */
  static void forceStoreFalse(TopLevelRewrites upstream, List<String> warnings) {
    JsonNode store = upstream.current("store");
    if (store != null && store.asBoolean(false)) {
      warnings.add("'store' was set to false: the gateway never lets OpenAI store calls");
    }
    upstream.set("store", BooleanNode.FALSE);
  }
}
