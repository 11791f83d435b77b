package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Queue semantics of scripted faults: one step per call, counted and sticky steps, fallback. */
class FaultScriptTest {
  private final FaultScript script = new FaultScript();

  @Test
  void emptyScriptMeansDefaultBehaviour() {
    assertEquals(Optional.empty(), script.next(SimRoute.OPENAI_CHAT));
  }

  @Test
  void stepsAreTakenInOrderOnePerCallThenTheDefaultReturns() {
    script.add(SimRoute.OPENAI_CHAT, Fault.rateLimited(1), 1);
    script.add(SimRoute.OPENAI_CHAT, Fault.connectionReset(), 1);

    assertEquals(Fault.rateLimited(1), script.next(SimRoute.OPENAI_CHAT).orElseThrow());
    assertEquals(Fault.connectionReset(), script.next(SimRoute.OPENAI_CHAT).orElseThrow());
    assertTrue(script.next(SimRoute.OPENAI_CHAT).isEmpty());
  }

  @Test
  void aCountedStepCoversThatManyCalls() {
    script.add(SimRoute.ANTHROPIC_MESSAGES, Fault.overloaded(), 3);
    script.add(SimRoute.ANTHROPIC_MESSAGES, Fault.invalidJson(), 1);

    for (int i = 0; i < 3; i++) {
      assertEquals(Fault.overloaded(), script.next(SimRoute.ANTHROPIC_MESSAGES).orElseThrow());
    }
    assertEquals(Fault.invalidJson(), script.next(SimRoute.ANTHROPIC_MESSAGES).orElseThrow());
    assertTrue(script.next(SimRoute.ANTHROPIC_MESSAGES).isEmpty());
  }

  @Test
  void aForeverStepStaysUntilCleared() {
    script.add(SimRoute.OPENAI_RESPONSES, Fault.status(410), -1);
    for (int i = 0; i < 100; i++) {
      assertEquals(Fault.status(410), script.next(SimRoute.OPENAI_RESPONSES).orElseThrow());
    }
    assertEquals(1, script.pending(SimRoute.OPENAI_RESPONSES));
    script.clear();
    assertTrue(script.next(SimRoute.OPENAI_RESPONSES).isEmpty());
  }

  @Test
  void routesHaveSeparateQueues() {
    script.add(SimRoute.OPENAI_CHAT, Fault.rateLimited(2), 1);

    assertTrue(script.next(SimRoute.ANTHROPIC_MESSAGES).isEmpty());
    assertEquals(1, script.pending(SimRoute.OPENAI_CHAT));
  }

  @Test
  void zeroOrNegativeCountsOtherThanForeverAreRefused() {
    assertThrows(
        IllegalArgumentException.class, () -> script.add(SimRoute.OPENAI_CHAT, Fault.normal(), 0));
    assertThrows(
        IllegalArgumentException.class, () -> script.add(SimRoute.OPENAI_CHAT, Fault.normal(), -2));
  }
}
