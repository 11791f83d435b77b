package dev.spendgateway.sim;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * A test class with one simulator (default answers) for all its tests, started before the first and
 * closed after the last (after the subclass's own clean-up, e.g. its SDK client). Each test class
 * resets it as it needs: in process, or over {@code /_sim/reset} as another process would.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SimulatorPerClass {
  protected ProviderSimulator sim;

  @BeforeAll
  final void startTheSimulator() {
    sim = ProviderSimulator.start(SimConfig.defaults());
  }

  @AfterAll
  final void closeTheSimulator() {
    sim.close();
  }
}
