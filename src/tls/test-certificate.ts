/**
 * The certificate Rookery uses for TLS when none is configured: a
 * self-signed P-256 certificate for `localhost`, `127.0.0.1` and `::1`,
 * valid from 2000 to 2100 so that no test machine's clock falls outside it.
 *
 * Its private key is public (it is in this file), so it proves nothing
 * about who answers: it exists so that TLS code paths of clients can be
 * tested. Trust it in a test with `ca: TEST_CERTIFICATE` (Node) or a file
 * written by `rookery --print-certificate`.
 */
export const TEST_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIB2jCCAX+gAwIBAgIBATAKBggqhkjOPQQDAjAyMRwwGgYDVQQKDBNSb29rZXJ5
IHRlc3Qgc2VydmVyMRIwEAYDVQQDDAlsb2NhbGhvc3QwIBcNMDAwMTAxMDAwMDAw
WhgPMjEwMDAxMDEwMDAwMDBaMDIxHDAaBgNVBAoME1Jvb2tlcnkgdGVzdCBzZXJ2
ZXIxEjAQBgNVBAMMCWxvY2FsaG9zdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IA
BL31ge5E3ugJ+8cIYyxCILY41ssRlGnUMbVZHTenQel9+NTtE7up6I/rT2vmnChN
gHV7YRBGcbN0+/lw46ytFzWjgYMwgYAwDAYDVR0TAQH/BAIwADAOBgNVHQ8BAf8E
BAMCB4AwEwYDVR0lBAwwCgYIKwYBBQUHAwEwLAYDVR0RBCUwI4IJbG9jYWxob3N0
hwR/AAABhxAAAAAAAAAAAAAAAAAAAAABMB0GA1UdDgQWBBQoj0hsa9UNV5OkZRLi
LqQwrdLWSjAKBggqhkjOPQQDAgNJADBGAiEA51szMJS5dAWwgrI6AqON2noatR8I
eD9dcXxBamPoVuoCIQCbFb66pyfn6Lg1IEZGFTWoa9z/pll8MxPmoHmTIQAFqA==
-----END CERTIFICATE-----
`;

/** The private key of TEST_CERTIFICATE. Public on purpose: test use only. */
export const TEST_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgeH5NOvI5/H6h273s
xEkNZY0K5HXJlROJ0B/2b3z+07mhRANCAAS99YHuRN7oCfvHCGMsQiC2ONbLEZRp
1DG1WR03p0HpffjU7RO7qeiP609r5pwoTYB1e2EQRnGzdPv5cOOsrRc1
-----END PRIVATE KEY-----
`;
