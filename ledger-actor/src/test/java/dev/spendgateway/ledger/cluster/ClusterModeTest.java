package dev.spendgateway.ledger.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** When a process is a cluster node, what it refuses, and the configuration it runs with. */
class ClusterModeTest {

  private static Config config(String port, String seeds, String journalUrl) {
    Map<String, Object> values = new HashMap<>();
    values.put("gateway.host", "10.0.0.11");
    values.put("gateway.cluster.port", port);
    values.put("gateway.cluster.seeds", seeds);
    values.put("gateway.journal.url", journalUrl);
    return ConfigFactory.parseMap(values)
        .withFallback(ConfigFactory.parseResources("ledger-postgres-test.conf"))
        .withFallback(
            ConfigFactory.parseString(
                "cluster-node.pekko { actor.provider = cluster, "
                    + "cluster.split-brain-resolver.active-strategy = keep-majority }"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  @ParameterizedTest(name = "port={0} seeds={1} journal={2} -> {3}")
  @CsvSource(
      delimiter = '|',
      value = {
        "''    | ''                          | ''                               | ''",
        "''    | ''                          | jdbc:postgresql://db:5432/ledger | ''",
        "25520 | 10.0.0.11:25520             | ''                               | GATEWAY_JOURNAL_URL",
        "''    | 10.0.0.11:25520             | ''                               | GATEWAY_JOURNAL_URL",
        "25520 | ''                          | jdbc:postgresql://db:5432/ledger | GATEWAY_CLUSTER_SEEDS is not set",
        "port  | 10.0.0.11:25520             | jdbc:postgresql://db:5432/ledger | GATEWAY_CLUSTER_PORT must be a TCP port",
        "25520 | 10.0.0.11                   | jdbc:postgresql://db:5432/ledger | is not host:port",
        "25520 | 10.0.0.11:25520,10.0.0.12:1 | jdbc:postgresql://db:5432/ledger | ''",
      })
  void aNodeStartsOnlyWithAPostgresJournalAndValidSeeds(
      String port, String seeds, String url, String problem) {
    Optional<String> refused = ClusterMode.startupProblem(config(port, seeds, url));
    if (problem.isEmpty()) {
      assertTrue(refused.isEmpty(), refused.toString());
    } else {
      assertTrue(refused.orElse("").contains(problem), refused.toString());
    }
  }

  @Test
  void withoutClusterVariablesNothingChanges() {
    Config plain = config("", "", "");
    assertSame(plain, ClusterMode.configure(plain, "gateway"));
    assertFalse(ClusterMode.isClusterNode(plain));
  }

  @Test
  void aClusterNodeListensOnItsHostAndPortAndKnowsItsSeedsAndJournal() {
    Config node =
        ClusterMode.configure(
            config("25520", "10.0.0.11:25520, 10.0.0.12:25520", "jdbc:postgresql://db:5432/ledger"),
            "gateway");
    assertTrue(ClusterMode.isClusterNode(node));
    assertEquals("10.0.0.11", node.getString("pekko.remote.artery.canonical.hostname"));
    assertEquals(25520, node.getInt("pekko.remote.artery.canonical.port"));
    assertEquals(
        List.of("pekko://gateway@10.0.0.11:25520", "pekko://gateway@10.0.0.12:25520"),
        node.getStringList("pekko.cluster.seed-nodes"));
    assertEquals(
        "keep-majority", node.getString("pekko.cluster.split-brain-resolver.active-strategy"));
    assertEquals(
        "slick.jdbc.PostgresProfile$",
        node.getString("pekko-persistence-jdbc.shared-databases.slick.profile"));
  }
}
