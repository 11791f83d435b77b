package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The recording ring keeps only the newest calls but keeps counting all of them. */
class CallRecorderTest {

  private static ReceivedCall call(long seq) {
    return new ReceivedCall(
        seq,
        0,
        SimRoute.OPENAI_CHAT,
        Map.of(),
        Optional.empty(),
        List.of(),
        Map.of(),
        Map.of(),
        "normal");
  }

  @Test
  void keepsTheNewestCallsOldestFirst() {
    CallRecorder recorder = new CallRecorder(3);
    for (int i = 0; i < 8; i++) {
      recorder.record(call(recorder.nextSeq()));
    }

    assertEquals(List.of(6L, 7L, 8L), recorder.snapshot().stream().map(ReceivedCall::seq).toList());
    assertEquals(8, recorder.total());
  }

  @Test
  void clearStartsCountingAfresh() {
    CallRecorder recorder = new CallRecorder(3);
    recorder.record(call(recorder.nextSeq()));
    recorder.clear();

    assertEquals(List.of(), recorder.snapshot());
    recorder.record(call(recorder.nextSeq()));
    assertEquals(List.of(1L), recorder.snapshot().stream().map(ReceivedCall::seq).toList());
  }
}
