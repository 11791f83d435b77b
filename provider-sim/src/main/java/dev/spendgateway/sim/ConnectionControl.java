package dev.spendgateway.sim;

import org.apache.pekko.http.javadsl.model.AttributeKey;

/**
 * Lets a route abort the TCP connection its request came on. Pekko HTTP's routing layer can only
 * answer or fail an entity; a reset before any header needs a hook below it, so the simulator binds
 * TCP itself, puts a kill switch on each connection and hands it to the route as a request
 * attribute.
 */
@FunctionalInterface
interface ConnectionControl {
  AttributeKey<ConnectionControl> KEY =
      AttributeKey.create("provider-sim-connection", ConnectionControl.class);

  /** Aborts the connection at once; the client sees a reset / end of stream (an IOException). */
  void abort();
}
