#!/usr/bin/env python3
"""python-zeroconf peer for OpenGameKitLAN interoperability tests (traffic stays on one interface).

  zeroconf_peer.py check
      exit 0 if zeroconf imports, 3 otherwise.
  zeroconf_peer.py browse <type> <timeout> [--interface IP]
      browse <type> (e.g. _ogk._tcp.local.), resolve the first instance, print it as JSON, exit 0;
      exit 2 on timeout.
  zeroconf_peer.py register <type> <instance> <port> <peer> <seconds> [--interface IP]
      register an instance with TXT peer=<peer>, v=1 and the interface address, print
      "REGISTERED <full name>", keep it for <seconds> (or until stdin closes), unregister.
"""
import argparse
import json
import socket
import sys
import threading
import time

try:
    from zeroconf import IPVersion, ServiceBrowser, ServiceInfo, ServiceStateChange, Zeroconf
except ImportError:
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        sys.exit(3)
    print("python zeroconf is not installed (pip install zeroconf)", file=sys.stderr)
    sys.exit(3)


def make_zeroconf(interface):
    return Zeroconf(interfaces=[interface], ip_version=IPVersion.V4Only)


def browse(args):
    zc = make_zeroconf(args.interface)
    found = threading.Event()
    names = []

    def on_change(zeroconf, service_type, name, state_change):
        if state_change is ServiceStateChange.Added:
            names.append(name)
            found.set()

    ServiceBrowser(zc, args.type, handlers=[on_change])
    try:
        if not found.wait(args.timeout):
            print("timeout: no instance of %s" % args.type, file=sys.stderr)
            return 2
        info = zc.get_service_info(args.type, names[0], timeout=int(args.timeout * 1000))
        if info is None:
            print("timeout: could not resolve %s" % names[0], file=sys.stderr)
            return 2
        txt = {k.decode(): (v.decode() if v is not None else None) for k, v in info.properties.items()}
        print(json.dumps({
            "name": info.name,
            "server": info.server,
            "port": info.port,
            "txt": txt,
            "addresses": info.parsed_addresses(),
        }), flush=True)
        return 0
    finally:
        zc.close()


def register(args):
    zc = make_zeroconf(args.interface)
    full = "%s.%s" % (args.instance, args.type)
    info = ServiceInfo(
        args.type, full, port=args.port,
        properties={"peer": args.peer, "v": "1"},
        server="zc-peer-%d.local." % args.port,
        addresses=[socket.inet_aton(args.interface)],
    )
    zc.register_service(info)
    print("REGISTERED %s" % info.name, flush=True)
    deadline = time.time() + args.seconds
    stop = threading.Event()

    def watch_stdin():
        try:
            sys.stdin.read()
        finally:
            stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    while time.time() < deadline and not stop.is_set():
        time.sleep(0.1)
    zc.unregister_service(info)
    zc.close()
    return 0


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check")
    b = sub.add_parser("browse")
    b.add_argument("type")
    b.add_argument("timeout", type=float)
    b.add_argument("--interface", default="127.0.0.1")
    r = sub.add_parser("register")
    r.add_argument("type")
    r.add_argument("instance")
    r.add_argument("port", type=int)
    r.add_argument("peer")
    r.add_argument("seconds", type=float)
    r.add_argument("--interface", default="127.0.0.1")
    args = parser.parse_args()
    if args.command == "check":
        return 0
    return browse(args) if args.command == "browse" else register(args)


if __name__ == "__main__":
    sys.exit(main())
