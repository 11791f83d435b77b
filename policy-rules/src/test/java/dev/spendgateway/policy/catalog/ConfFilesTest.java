package dev.spendgateway.policy.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.Fixtures;
import dev.spendgateway.policy.request.PolicyLimits;
import java.io.File;
import org.junit.jupiter.api.Test;

/**
 * Parses the shipped conf/models.conf and conf/policy.conf the way the edge does, so the HOCON, the
 * test fixture and the defaults in code can never drift apart.
 */
class ConfFilesTest {
  private static final File CONF_DIR = new File(System.getProperty("gateway.conf.dir", "../conf"));

  @Test
  void modelsConfIsTheCatalogTheTestsUse() {
    Config config = ConfigFactory.parseFile(new File(CONF_DIR, "models.conf")).resolve();
    ModelCatalog fromHocon = ModelCatalog.fromMap(config.getConfig("models").root().unwrapped());
    assertEquals(Fixtures.CATALOG.all(), fromHocon.all());
  }

  @Test
  void policyConfHoldsTheDefaults() {
    Config config = ConfigFactory.parseFile(new File(CONF_DIR, "policy.conf")).resolve();
    assertEquals(
        PolicyLimits.defaults(),
        PolicyLimits.fromMap(config.getConfig("policy").root().unwrapped()));
  }

  @Test
  void aSystemPropertyOverrideSwitchesUrlImagesOn() {
    // -Dpolicy.allow-url-content.images=true arrives as the text "true", not a boolean.
    Config config =
        ConfigFactory.parseMap(java.util.Map.of("policy.allow-url-content.images", "true"))
            .withFallback(ConfigFactory.parseFile(new File(CONF_DIR, "policy.conf")))
            .resolve();
    PolicyLimits limits = PolicyLimits.fromMap(config.getConfig("policy").root().unwrapped());
    assertEquals(new PolicyLimits.UrlContent(true, false), limits.urlContent());
  }
}
