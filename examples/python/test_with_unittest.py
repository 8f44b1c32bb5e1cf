"""A unittest suite using python/rookery.py (the standard library only).

Run it with the module on the path, e.g. from a project with Rookery installed:

    PYTHONPATH=node_modules/rookery/python python3 -m unittest test_with_unittest
"""
import imaplib
import unittest

from rookery import Rookery, RookeryError


class MailTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # One server for the class, on free ports; stopped in tearDownClass.
        cls.rookery = Rookery(["--plugin", "all"]).start()

    @classmethod
    def tearDownClass(cls):
        cls.rookery.stop()

    def setUp(self):
        # Each test starts from the options' mailboxes again.
        self.rookery.reset()

    def imap(self):
        client = imaplib.IMAP4(self.rookery.imap_host, self.rookery.imap_port)
        client.login("testuser", "testpass")
        self.addCleanup(client.logout)
        return client

    def test_delivered_message_is_fetched(self):
        self.rookery.add_message("INBOX", "Subject: Invoice 42\r\n\r\nPlease pay.\r\n")
        client = self.imap()
        client.select("INBOX")
        typ, data = client.fetch("1", "(BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        self.assertEqual(typ, "OK")
        self.assertIn(b"Subject: Invoice 42", data[0][1])

    def test_reset_between_tests(self):
        self.assertEqual(self.rookery.messages("INBOX"), [])

    def test_client_flags_are_visible_over_rest(self):
        self.rookery.add_message("INBOX", b"Subject: bytes\r\n\r\n\xe9\r\n")
        client = self.imap()
        client.select("INBOX")
        client.store("1", "+FLAGS", "(\\Flagged)")
        self.assertEqual(self.rookery.messages("INBOX")[0]["flags"], ["\\Flagged"])

    def test_wait_for_what_a_client_did(self):
        since = self.rookery.latest_event()
        client = self.imap()
        client.append("INBOX", None, None, b"Subject: appended\r\n\r\nby imaplib\r\n")
        event = self.rookery.wait_for("command", match={"command": "APPEND"}, since=since)
        self.assertEqual(event["data"]["status"], "OK")
        # A state condition: INBOX holds at least one message.
        state = self.rookery.wait_for(mailbox="INBOX", messages=1)
        self.assertEqual(state["data"]["messages"], 1)

    def test_errors_carry_the_rest_error_code(self):
        with self.assertRaises(RookeryError) as caught:
            self.rookery.messages("No such mailbox")
        self.assertEqual(caught.exception.status, 404)
        self.assertEqual(caught.exception.code, "NONEXISTENT")


    def test_a_bad_option_is_reported(self):
        # A server that cannot start says why (the command's own message).
        with self.assertRaises(RookeryError) as caught:
            Rookery(["--plugin", "NOPE"]).start()
        self.assertIn('unknown plugin "NOPE"', str(caught.exception))


if __name__ == "__main__":
    unittest.main()
