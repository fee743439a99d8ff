import Dispatch
import Foundation
import OpenGameKit
import Synchronization

/// A test peer for the two-host test: one `GKSession` that finds another probe over mDNS, connects (or accepts),
/// and exchanges reliable and unreliable data with it, then reports what it saw and exits 0 if all of it arrived.
///
///     OPENGAMEKIT_INTERFACE=veth0 LANSessionProbe --name A --session probe123 --connect
///     OPENGAMEKIT_INTERFACE=veth1 LANSessionProbe --name B --session probe123
///
/// Reliable: `--messages` numbered messages of growing size (the last one 87 KB), each checked for order and
/// content. Unreliable: a datagram every 20 ms until the other side has one. Each side then sends `done` (reliable)
/// and exits once both have. Lines on standard output say what happened (`found`, `connected`, `summary`).
/// `--passphrase` makes the session private (both probes need the same one).
@main
enum LANSessionProbe {
    static let usage =
        "usage: [OPENGAMEKIT_INTERFACE=IF] LANSessionProbe --name NAME --session ID [--passphrase TEXT] [--connect] [--messages N] [--timeout SECONDS]"

    static func main() async {
        let options: Options
        let session: GKSession
        do {
            options = try Options(Array(CommandLine.arguments.dropFirst()))
            session = try GKSession(sessionID: options.sessionID, displayName: options.name, sessionMode: .peer, passphrase: options.passphrase)
        } catch let error as Options.Invalid {
            FileHandle.standardError.write(Data("\(error.problem)\n\(usage)\n".utf8))
            exit(2)
        } catch {
            say("error: \(error)")
            exit(1)
        }
        let probe = Probe(session: session, options: options)
        session.delegateQueue = DispatchQueue(label: "LANSessionProbe")
        session.delegate = probe
        session.setDataReceiveHandler { data, peer, _ in probe.received(data, from: peer) }
        session.isAvailable = true
        say("probe \(options.name) is peer \(session.peerID) in session \(session.sessionID)")

        let deadline = ContinuousClock.now + .milliseconds(Int64(options.timeout * 1000))
        while ContinuousClock.now < deadline, !probe.isFinished {
            try? await Task.sleep(for: .milliseconds(20))
            probe.sendUnreliableIfNeeded()
        }
        say(probe.summary)
        session.disconnectFromAllPeers()
        session.isAvailable = false
        try? await Task.sleep(for: .milliseconds(300))  // let the goodbyes go out
        exit(probe.isFinished ? 0 : 1)
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    struct Options: Sendable {
        /// What is wrong with the command line.
        struct Invalid: Error {
            var problem: String
        }

        var name = ""
        var sessionID = ""
        var passphrase: String?
        var connect = false
        var messages = 50
        var timeout = 60.0

        init(_ arguments: [String]) throws(Invalid) {
            var rest = arguments[...]
            func value(of option: String) throws(Invalid) -> String {
                guard let value = rest.popFirst() else { throw Invalid(problem: "\(option) needs a value") }
                return value
            }
            while let argument = rest.popFirst() {
                switch argument {
                case "--name": name = try value(of: argument)
                case "--session": sessionID = try value(of: argument)
                case "--passphrase": passphrase = try value(of: argument)
                case "--connect": connect = true
                case "--messages":
                    guard let count = Int(try value(of: argument)), count > 0 else { throw Invalid(problem: "--messages needs a positive count") }
                    messages = count
                case "--timeout":
                    guard let seconds = Double(try value(of: argument)), seconds > 0 else { throw Invalid(problem: "--timeout needs positive seconds") }
                    timeout = seconds
                default: throw Invalid(problem: "unknown argument \(argument)")
                }
            }
            guard !name.isEmpty, !sessionID.isEmpty else { throw Invalid(problem: "--name and --session are required") }
        }
    }
}

/// The probe's state: who the other side is and what arrived from it.
final class Probe: GKSessionDelegate, Sendable {
    private struct State {
        var peer: String?
        var connectRequested = false
        var nextReliable = 0
        var reliableErrors: [String] = []
        var unreliableReceived = 0
        var unreliableSent = 0
        var doneSent = false
        var doneReceived = false
    }

    private let session: GKSession
    private let options: LANSessionProbe.Options
    private let state = Mutex(State())

    init(session: GKSession, options: LANSessionProbe.Options) {
        self.session = session
        self.options = options
    }

    /// The reliable message number `index`: 4 bytes of index, then a pattern; sizes grow to exactly 87 KB.
    static func message(_ index: Int, of count: Int) -> Data {
        let maximum = 87 * 1024
        let size = index == count - 1 ? maximum : 4 + (index * 7_919) % (maximum - 4)
        var data = Data(count: size)
        data.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: UInt32(index).bigEndian, as: UInt32.self)
            for offset in 4..<size { bytes[offset] = UInt8((index + offset) % 251) }
        }
        return data
    }

    var isFinished: Bool { state.withLock { $0.doneSent && $0.doneReceived } }

    var summary: String {
        state.withLock { state in
            "summary: reliable \(state.nextReliable)/\(options.messages) in order, unreliable received \(state.unreliableReceived) "
                + "(sent \(state.unreliableSent)), done sent \(state.doneSent), done received \(state.doneReceived), "
                + "errors \(state.reliableErrors.isEmpty ? "none" : state.reliableErrors.joined(separator: "; "))"
        }
    }

    func session(_ session: GKSession, peer peerID: String, didChange newState: GKPeerConnectionState) {
        switch newState {
        case .available:
            LANSessionProbe.say("found \(peerID) named \(session.displayName(forPeer: peerID) ?? "?")")
            let connect =
                options.connect
                && state.withLock { state in
                    defer { state.connectRequested = true }
                    return !state.connectRequested
                }
            if connect { session.connect(toPeer: peerID, withTimeout: 20) }
        case .connected:
            LANSessionProbe.say("connected to \(session.displayName(forPeer: peerID) ?? peerID)")
            state.withLock { $0.peer = peerID }
            for index in 0..<options.messages {
                sendReliable(Self.message(index, of: options.messages), to: peerID)
            }
        case .disconnected:
            LANSessionProbe.say("disconnected from \(peerID)")
        default:
            break
        }
    }

    func session(_ session: GKSession, didReceiveConnectionRequestFromPeer peerID: String) {
        LANSessionProbe.say("request from \(session.displayName(forPeer: peerID) ?? peerID)")
        do {
            try session.acceptConnection(fromPeer: peerID)
        } catch {
            LANSessionProbe.say("accept failed: \(error)")
        }
    }

    func session(_ session: GKSession, connectionWithPeerFailed peerID: String, withError error: any Error) {
        LANSessionProbe.say("connection with \(peerID) failed: \(error)")
        state.withLock { $0.connectRequested = false }
    }

    /// Called on the delegate queue for every message.
    func received(_ data: Data, from peer: String) {
        if data == Data("done".utf8) {
            state.withLock { $0.doneReceived = true }
            return
        }
        if data.first == UInt8(ascii: "u") {
            state.withLock { $0.unreliableReceived += 1 }
        } else {
            state.withLock { state in
                let expected = Self.message(state.nextReliable, of: options.messages)
                if state.nextReliable < options.messages, data == expected {
                    state.nextReliable += 1
                } else {
                    state.reliableErrors.append("message \(state.nextReliable): got \(data.count) bytes that do not match")
                }
            }
        }
        sendDoneIfComplete(to: peer)
    }

    /// Sends a datagram every call until one has arrived from the other side (and a few more after that).
    func sendUnreliableIfNeeded() {
        let target: String? = state.withLock { state in
            guard let peer = state.peer, !state.doneSent || state.unreliableSent < 5 else { return nil }
            state.unreliableSent += 1
            return peer
        }
        guard let target else { return }
        do {
            try session.send(Data("u\(UInt32.random(in: 0...UInt32.max))".utf8), toPeers: [target], with: .unreliable)
        } catch {
            LANSessionProbe.say("unreliable send failed: \(error)")
        }
    }

    private func sendDoneIfComplete(to peer: String) {
        let send = state.withLock { state in
            guard !state.doneSent, state.nextReliable == options.messages, state.unreliableReceived > 0 else { return false }
            state.doneSent = true
            return true
        }
        if send { sendReliable(Data("done".utf8), to: peer) }
    }

    private func sendReliable(_ data: Data, to peer: String) {
        do {
            try session.send(data, toPeers: [peer], with: .reliable)
        } catch {
            LANSessionProbe.say("reliable send failed: \(error)")
        }
    }
}
