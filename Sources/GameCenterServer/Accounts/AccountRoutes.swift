import GameCenterProtocol
import Hummingbird

/// HTTP for accounts and sessions: decode, call ``AccountService``, encode.
struct AccountRoutes {
    let accounts: AccountService

    /// Routes open to any device of a known game.
    func addPublic(to group: RouterGroup<AppRequestContext>) {
        group.post("accounts") { request, context -> EditedResponse<SessionResponse> in
            let body = try await request.decode(as: SignUpRequest.self, context: context)
            return EditedResponse(
                status: .created, response: try await accounts.signUp(body, device: context.requireDevice(), from: ClientAddress(context.remoteAddress)))
        }
        group.post("sessions") { request, context -> SessionResponse in
            let body = try await request.decode(as: SignInRequest.self, context: context)
            return try await accounts.signIn(body, device: context.requireDevice(), from: ClientAddress(context.remoteAddress))
        }
        group.post("sessions/for-game") { request, context -> SessionResponse in
            let body = try await request.decode(as: GameSessionRequest.self, context: context)
            return try await accounts.openSession(from: body, device: context.requireDevice())
        }
    }

    /// Routes for a signed-in device.
    func addAuthenticated(to group: RouterGroup<AppRequestContext>) {
        group.get("me") { _, context -> LocalPlayerProfile in
            try await accounts.me(context.requireSession(), device: context.requireDevice())
        }
        group.patch("me") { request, context -> LocalPlayerProfile in
            let body = try await request.decode(as: UpdateProfileRequest.self, context: context)
            return try await accounts.updateProfile(body, session: context.requireSession())
        }
        group.post("me/password") { request, context -> HTTPResponse.Status in
            let body = try await request.decode(as: ChangePasswordRequest.self, context: context)
            _ = try await accounts.changePassword(body, session: context.requireSession(), from: ClientAddress(context.remoteAddress))
            return .noContent
        }
        group.get("sessions") { _, context -> SessionList in
            SessionList(sessions: try await accounts.sessions(context.requireSession()))
        }
        group.delete("sessions/current") { _, context -> HTTPResponse.Status in
            try await accounts.signOut(context.requireSession())
            return .noContent
        }
        group.delete("sessions/others") { _, context -> HTTPResponse.Status in
            _ = try await accounts.revokeOthers(context.requireSession())
            return .noContent
        }
        group.delete("sessions/{sessionID}") { _, context -> HTTPResponse.Status in
            let id = try context.parameters.require("sessionID")
            try await accounts.revoke(sessionID: id, by: context.requireSession())
            return .noContent
        }
    }
}

extension SessionResponse: ResponseEncodable {}
extension LocalPlayerProfile: ResponseEncodable {}
extension SessionList: ResponseEncodable {}
