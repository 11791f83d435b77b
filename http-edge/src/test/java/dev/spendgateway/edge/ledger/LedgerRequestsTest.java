package dev.spendgateway.edge.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.ledger.ReserveRequest;
import org.junit.jupiter.api.Test;

/** A ledger API reserve may name what it pays for; one that names nothing journals no model. */
class LedgerRequestsTest {
  private final LedgerRequests requests = new LedgerRequests(new ObjectMapper());

  @Test
  void aReserveKeepsTheModelAndProviderItNames() {
    ReserveRequest r =
        requests.reserve(
            "{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"tag\":\"batch\","
                + "\"model\":\"ft:gpt-4.1:acme:x\",\"provider\":\"openai\"}");
    assertEquals("batch", r.tag());
    assertEquals("ft:gpt-4.1:acme:x", r.model());
    assertEquals("openai", r.provider());
  }

  @Test
  void aReserveWithoutThemHasNone() {
    ReserveRequest r = requests.reserve("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1}");
    assertNull(r.model());
    assertNull(r.provider());
  }
}
