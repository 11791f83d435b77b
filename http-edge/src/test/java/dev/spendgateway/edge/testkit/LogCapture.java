package dev.spendgateway.edge.testkit;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.LoggerFactory;

/** Every formatted log line (message and stack traces) of every logger, kept in memory. */
public final class LogCapture extends AppenderBase<ILoggingEvent> {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ConcurrentLinkedQueue<ILoggingEvent> events = new ConcurrentLinkedQueue<>();

  /** The access lines, parsed once as they come (a storm test reads them once per call). */
  private final ConcurrentLinkedQueue<JsonNode> accessLines = new ConcurrentLinkedQueue<>();

  private final ConcurrentLinkedQueue<String> notJson = new ConcurrentLinkedQueue<>();

  public static LogCapture attach() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    LogCapture capture = new LogCapture();
    capture.setContext(context);
    capture.setName("test-capture");
    capture.start();
    context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(capture);
    // The access logger does not add to root (additivity=false in conf/logback.xml).
    context.getLogger("access").addAppender(capture);
    return capture;
  }

  public void detach() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(this);
    context.getLogger("access").detachAppender(this);
    stop();
  }

  @Override
  protected void append(ILoggingEvent event) {
    event.prepareForDeferredProcessing();
    events.add(event);
    if (event.getLoggerName().equals("access")) {
      try {
        accessLines.add(JSON.readTree(event.getFormattedMessage()));
      } catch (IOException e) {
        notJson.add(event.getFormattedMessage());
      }
    }
  }

  /** Every captured line as text, with logger name, MDC and stack traces. */
  public List<String> allText() {
    List<String> out = new ArrayList<>();
    for (ILoggingEvent e : events) {
      StringBuilder line =
          new StringBuilder(e.getLoggerName()).append(' ').append(e.getFormattedMessage());
      line.append(' ').append(e.getMDCPropertyMap());
      for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
        line.append(' ').append(t.getClassName()).append(": ").append(t.getMessage());
      }
      out.add(line.toString());
    }
    return out;
  }

  /** Every captured line logged at ERROR, as {@link #allText()} formats it. */
  public List<String> errorLines() {
    List<String> out = new ArrayList<>();
    for (ILoggingEvent e : events) {
      if (e.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.ERROR)) {
        out.add(e.getLoggerName() + " " + e.getFormattedMessage());
      }
    }
    return out;
  }

  /** The formatted messages of one logger, in order. */
  public List<String> messagesOf(String logger) {
    List<String> out = new ArrayList<>();
    for (ILoggingEvent e : events) {
      if (e.getLoggerName().equals(logger)) {
        out.add(e.getFormattedMessage());
      }
    }
    return out;
  }

  /** Every access line so far, in order (an access line that is not JSON fails the caller). */
  public List<JsonNode> accessLines() {
    if (!notJson.isEmpty()) {
      throw new AssertionError("access log line is not JSON: " + notJson.peek());
    }
    return List.copyOf(accessLines);
  }
}
