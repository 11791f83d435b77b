package dev.spendgateway.upstream.failover;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.File;

/** Test helper: the real conf/models.conf + conf/profiles.conf of this repository. */
final class Confs {
  private Confs() {}

  static Config shipped() {
    File conf = new File("../conf");
    return ConfigFactory.parseFile(new File(conf, "profiles.conf"))
        .withFallback(ConfigFactory.parseFile(new File(conf, "models.conf")))
        .resolve();
  }
}
