package dev.spendgateway.edge.testkit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * A test class with one {@link TestGateway} for all its tests: started before the first, closed
 * after the last, its simulator's scripts and records cleared before each test. A subclass says
 * which gateway ({@link #startGateway}) and reads it as {@link #gw}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class GatewayPerClass {
  protected TestGateway gw;

  /** The suite's gateway, e.g. {@code E2eGateway.start("calls")}. */
  protected abstract TestGateway startGateway() throws Exception;

  @BeforeAll
  final void startTheGateway() throws Exception {
    gw = startGateway();
  }

  @AfterAll
  final void closeTheGateway() throws Exception {
    gw.close();
  }

  @BeforeEach
  final void resetTheSimulator() {
    gw.sim.reset();
  }
}
