"""Checks a player's identity verification items as a studio's game server would, independently of the Game Center
server's code: the GameKit-style signature against the X.509 certificate at publicKeyURL (cryptography), and the
identity token against the server's /.well-known/jwks.json (PyJWT).

Usage: verify_identity.py SERVER_URL PLAYER_ID BUNDLE_ID < items.json (the JSON of POST /v1/identity-verification,
signature and salt in base64). Exit 0 when both check out; otherwise it says which did not, exit 1.
"""

import base64
import json
import struct
import sys
import urllib.request

import jwt
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding


def main():
    server, player_id, bundle_id = sys.argv[1:4]
    items = json.load(sys.stdin)
    with urllib.request.urlopen(items["publicKeyURL"], timeout=10) as response:
        certificate = x509.load_der_x509_certificate(response.read())
    signed = player_id.encode() + bundle_id.encode() + struct.pack(">Q", items["timestamp"]) + base64.b64decode(items["salt"])
    try:
        certificate.public_key().verify(base64.b64decode(items["signature"]), signed, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        print("the signature does not verify against the certificate")
        return 1
    keys = jwt.PyJWKClient(server.rstrip("/") + "/.well-known/jwks.json")
    token = items["identityToken"]
    try:
        claims = jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["ES256"], audience=bundle_id, issuer=server.rstrip("/"))
    except jwt.PyJWTError as error:
        print(f"the identity token does not verify: {error}")
        return 1
    if claims["sub"] != player_id or claims["exp"] - claims["iat"] > 600:
        print(f"the identity token's claims are wrong: {claims}")
        return 1
    print("verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
