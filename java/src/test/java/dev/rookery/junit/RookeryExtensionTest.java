package dev.rookery.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.mail.Flags;
import jakarta.mail.Folder;
import jakarta.mail.Message;
import jakarta.mail.Session;
import jakarta.mail.Store;
import jakarta.mail.Transport;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension against the real command: REST in, Jakarta Mail's IMAP and SMTP on the other side. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RookeryExtensionTest {
  @RegisterExtension
  static RookeryExtension rookery = RookeryExtension.builder().plugins("all").smtp().build();

  private static Store imap() throws Exception {
    Properties props = new Properties();
    props.put("mail.imap.connectiontimeout", "10000");
    props.put("mail.imap.timeout", "10000");
    Store store = Session.getInstance(props).getStore("imap");
    store.connect(rookery.imapHost(), rookery.imapPort(), "testuser", "testpass");
    return store;
  }

  @Test
  @Order(1)
  void aMessageAddedOverRestIsReadOverImap() throws Exception {
    Map<String, Object> added = rookery.client().addMessage("INBOX",
        "From: alice@example.com\r\nTo: testuser@example.com\r\nSubject: hello from REST\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nGr\u00fc\u00dfe aus Java\r\n");
    assertEquals(1L, added.get("uid"));
    Store store = imap();
    try {
      Folder inbox = store.getFolder("INBOX");
      inbox.open(Folder.READ_WRITE);
      Message[] messages = inbox.getMessages();
      assertEquals(1, messages.length);
      assertEquals("hello from REST", messages[0].getSubject());
      assertEquals("Gr\u00fc\u00dfe aus Java\r\n", messages[0].getContent());
      messages[0].setFlag(Flags.Flag.FLAGGED, true);
      inbox.close(false);
    } finally {
      store.close();
    }
    // The flag set over IMAP is what REST reads: one store behind both.
    Map<String, Object> listed = RookeryClient.asMap(rookery.client().messages("INBOX").get(0));
    assertTrue(RookeryClient.asList(listed.get("flags")).contains("\\Flagged"), "flags: " + listed.get("flags"));
  }

  @Test
  @Order(2)
  void eachTestStartsFromTheOptionsAndIsMarked() {
    assertEquals(List.of(), rookery.client().messages("INBOX"), "reset before each test");
    // The extension marked the first test's end (it passed) and this test's start, with their display names.
    RookeryClient client = rookery.client();
    Map<String, Object> end = client.waitFor(Map.of("types", "mark", "match", "phase=end,outcome=pass,text=aMessageAddedOverRestIsReadOverImap()", "since", "0"), Duration.ofSeconds(5));
    Map<String, Object> start = client.waitFor(Map.of("types", "mark", "match", "phase=start,text=eachTestStartsFromTheOptionsAndIsMarked()", "since", "0"), Duration.ofSeconds(5));
    assertTrue(((Number) start.get("id")).longValue() > ((Number) end.get("id")).longValue(), "start " + start + " after end " + end);
  }

  @Test
  @Order(3)
  void aMessageSentOverSmtpArrivesInTheInbox() throws Exception {
    Properties props = new Properties();
    props.put("mail.smtp.host", rookery.smtpHost());
    props.put("mail.smtp.port", String.valueOf(rookery.smtpPort()));
    props.put("mail.smtp.connectiontimeout", "10000");
    props.put("mail.smtp.timeout", "10000");
    MimeMessage message = new MimeMessage(Session.getInstance(props));
    message.setFrom(new InternetAddress("bob@example.com"));
    message.setRecipient(Message.RecipientType.TO, new InternetAddress("testuser@example.com"));
    message.setSubject("over SMTP");
    message.setText("sent by Jakarta Mail\r\n");
    Transport.send(message);
    rookery.client().waitFor(Map.of("mailbox", "INBOX", "messages", "1"), Duration.ofSeconds(10));
    Store store = imap();
    try {
      Folder inbox = store.getFolder("INBOX");
      inbox.open(Folder.READ_ONLY);
      assertEquals("over SMTP", inbox.getMessage(1).getSubject());
      inbox.close(false);
    } finally {
      store.close();
    }
  }

  @Test
  @Order(4)
  void restErrorsCarryTheStatusAndTheCode() {
    RookeryException err = org.junit.jupiter.api.Assertions.assertThrows(RookeryException.class, () -> rookery.client().messages("No such mailbox"));
    assertEquals(404, err.status());
    assertEquals("NONEXISTENT", err.code());
    assertEquals(rookery.restUrl(), RookeryClient.asMap(rookery.ready().get("rest")).get("url"));
  }
}
