import GameCenterProtocol
import Hummingbird

/// `GET /admin/v1/nodes`: the nodes on the database and their health.
struct NodeRoutes {
    let registry: NodeRegistry

    func add(to group: RouterGroup<AppRequestContext>) {
        group.get("nodes") { _, _ -> NodeList in try await registry.list() }
    }
}

extension NodeList: ResponseEncodable {}
